// FEN and UCI moves: the first line a FEN, the second a move in UCI on that position.
#include <string>

#include "looplab/tasks/chess/board.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const size_t nl = text.find('\n');
  const std::string fen = text.substr(0, nl), uci = nl == std::string::npos ? "" : text.substr(nl + 1);
  looplab::chess::Board board;
  std::string why;
  if (!looplab::chess::parse_fen(fen, board, why)) return 0;
  (void)looplab::chess::to_fen(board);
  const auto moves = looplab::chess::legal_moves(board);
  looplab::chess::Move move;
  if (looplab::chess::parse_uci(board, uci, move, why)) (void)looplab::chess::make_move(board, move);
  if (!moves.empty()) (void)looplab::chess::make_move(board, moves.front());
  return 0;
}
