// `looplab serve`: an HTTP server (cpp-httplib) that serves the web lab's static front end
// (web/) and the JSON API of api.h. Bound to 127.0.0.1 by default. Every API error is a JSON
// object {"error": MESSAGE, "status": CODE} with a 4xx status; an unexpected exception in a
// handler is a 500 with its message, and the server keeps running.
#pragma once

#include <memory>
#include <string>

namespace looplab::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8080;            // 0: any free port (see Server::bind)
  std::string runs = "runs";  // the folder whose subfolders are the runs page's runs
  std::string sweeps = "sweeps";  // the folder whose subfolders hold sweep reports (report.json)
  // The paper's tables 4-6 (sweeps/paper_tables.json), shown beside the runs of their
  // configurations; "" or a missing file: none.
  std::string paper_tables;
  std::string web = "web";    // the static front end
  bool log = false;           // one line per request on stderr
};

class Server {
 public:
  explicit Server(ServeOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the socket; returns the port (the chosen one when options.port is 0). Throws
  // looplab::Error when the address cannot be bound or the web folder has no index.html.
  int bind();
  // Serves until stop() (blocks). Call bind() first.
  void listen();
  // Stops listen() from another thread; safe to call more than once.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace looplab::serve
