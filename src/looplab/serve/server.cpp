#include "looplab/serve/server.h"

#include <cstdio>
#include <filesystem>
#include <utility>
#include <vector>

#include <httplib.h>
#include <sys/socket.h>
#include <nlohmann/json.hpp>

#include "looplab/serve/api.h"
#include "looplab/util/error.h"

namespace looplab::serve {

namespace {

using nlohmann::json;

Query query_of(const httplib::Request& req) {
  Query q;
  for (const auto& [k, v] : req.params) q.emplace(k, v);
  return q;
}

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  // Replace invalid UTF-8 rather than throw while answering.
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, status, {{"error", message}, {"status", status}});
}

// Runs an API handler: its JSON with 200, an ApiError as its 4xx, anything else as a 500.
template <class F>
httplib::Server::Handler api(F f) {
  return [f](const httplib::Request& req, httplib::Response& res) {
    try {
      f(req, res);
    } catch (const ApiError& e) {
      send_error(res, e.status(), e.what());
    } catch (const std::exception& e) {
      send_error(res, 500, std::string("internal error: ") + e.what());
    } catch (...) {
      send_error(res, 500, "internal error");
    }
  };
}

}  // namespace

struct Server::Impl {
  ServeOptions options;
  Runs runs;
  Sweeps sweeps;
  httplib::Server http;
  bool bound = false;
  socket_t listen_socket = INVALID_SOCKET;

  explicit Impl(ServeOptions o) : options(std::move(o)), runs(options.runs, options.paper_tables), sweeps(options.sweeps) {}

  void routes() {
    // An idle keep-alive connection holds a worker until it times out; a browser opens six per
    // host, so keep more workers than that and let idle connections go after 2 s.
    // Limits against hostile or broken clients (docs/reliability.md): a client that trickles its
    // request holds one worker until a read times out (2 s without a byte), so the pool is large
    // (128) for a loopback lab; a request line or header over 8 KiB is refused by cpp-httplib
    // (414 / 400), and a body (the API takes none) over 64 KiB with 413, so memory stays bounded.
    http.new_task_queue = [] { return new httplib::ThreadPool(128); };
    // Debian's cpp-httplib listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG, fixed when the
    // library was built): under a burst of new connections the kernel drops SYNs past it and the
    // client retries after its 1 s initial retransmission timeout (seen: a probe at 1.01 s in
    // tests/serve/load_test.py). The listening socket is kept here and listened on again, with
    // the backlog raised, once bound (Linux updates a listening socket's backlog).
    http.set_socket_options([this](socket_t sock) {
      httplib::default_socket_options(sock);
      listen_socket = sock;
    });
    http.set_keep_alive_timeout(2);
    http.set_read_timeout(2, 0);
    http.set_write_timeout(5, 0);
    http.set_payload_max_length(64 * 1024);
    // Every request here is a GET without a body: one that declares a body is refused before it
    // is read (413), and so is one with more headers than any browser sends (431).
    http.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
      if (req.headers.size() > 100) {
        send_error(res, 431, "more than 100 request headers");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0") {
        send_error(res, 413, "the API takes no request body");
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    for (const auto& [ext, mime] : std::vector<std::pair<std::string, std::string>>{
             {"js", "text/javascript"}, {"mjs", "text/javascript"}, {"css", "text/css"}, {"html", "text/html"},
             {"json", "application/json"}, {"svg", "image/svg+xml"}, {"png", "image/png"}, {"woff2", "font/woff2"}})
      http.set_file_extension_and_mimetype_mapping(ext, mime);
    if (!http.set_mount_point("/", options.web))
      throw Error("serve: the web folder '" + options.web + "' does not exist");

    http.Get("/api/explore", api([](const httplib::Request&, httplib::Response& res) {
               send_json(res, 200, explore_list());
             }));
    http.Get(R"(/api/explore/([^/]+))", api([](const httplib::Request& req, httplib::Response& res) {
               send_json(res, 200, explore_one(req.matches[1].str(), query_of(req)));
             }));
    http.Get("/api/regions", api([](const httplib::Request& req, httplib::Response& res) {
               send_json(res, 200, regions(query_of(req)));
             }));
    http.Get("/api/anisotropy", api([](const httplib::Request& req, httplib::Response& res) {
               send_json(res, 200, anisotropy(query_of(req)));
             }));
    http.Get("/api/phase", api([](const httplib::Request& req, httplib::Response& res) {
               send_json(res, 200, phase(query_of(req)));
             }));
    http.Get("/api/runs", api([this](const httplib::Request&, httplib::Response& res) {
               send_json(res, 200, runs.list());
             }));
    // The path arrives URL-decoded: '%2e%2e' is '..' and '%2f' a '/' by now, so the pieces are
    // checked after decoding (Runs refuses '..', '/', absolute paths and links leading out).
    http.Get(R"(/api/runs/(.+))", api([this](const httplib::Request& req, httplib::Response& res) {
               const std::string rest = req.matches[1].str();
               const size_t slash = rest.find('/');
               if (slash == std::string::npos) return send_json(res, 200, runs.run(rest));
               const std::string name = rest.substr(0, slash), file = rest.substr(slash + 1);
               if (file.find('/') != std::string::npos || name == ".." || file == "..")
                 throw ApiError(400, "runs: '" + rest + "' is not RUN or RUN/FILE inside the runs folder");
               const std::string text = runs.file(name, file);
               res.set_header("Cache-Control", "no-store");
               res.set_content(text, file.size() > 5 && file.substr(file.size() - 5) == ".json"
                                         ? "application/json"
                                         : "text/plain; charset=utf-8");
             }));
    http.Get("/api/sweeps", api([this](const httplib::Request&, httplib::Response& res) {
               send_json(res, 200, sweeps.list());
             }));
    http.Get(R"(/api/sweeps/(.+))", api([this](const httplib::Request& req, httplib::Response& res) {
               send_json(res, 200, sweeps.report(req.matches[1].str()));
             }));
    // Anything else under /api is a JSON 404; other missing paths get a short text body.
    http.Get(R"(/api(/.*)?)", api([](const httplib::Request& req, httplib::Response&) {
               throw ApiError(404, "no API endpoint " + req.path +
                                       " (explore, explore/NAME, regions, anisotropy, phase, runs, runs/NAME, runs/NAME/FILE, sweeps, sweeps/NAME)");
             }));
    http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      if (req.path.rfind("/api", 0) == 0)
        send_error(res, res.status, "HTTP " + std::to_string(res.status));
      else
        res.set_content("looplab serve: " + std::to_string(res.status) + " " + req.path + "\n", "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    }));
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      std::string what = "internal error";
      try {
        if (ep) std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what += std::string(": ") + e.what();
      } catch (...) {
      }
      send_error(res, 500, what);
    });
    if (options.log)
      http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
        std::fprintf(stderr, "%s %s -> %d\n", req.method.c_str(), req.target.c_str(), res.status);
      });
  }
};

namespace {
constexpr int kListenBacklog = 256;  // connections waiting to be accepted (see set_socket_options)
}  // namespace

Server::Server(ServeOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Server::~Server() { stop(); }

int Server::bind() {
  const ServeOptions& o = impl_->options;
  if (!std::filesystem::is_regular_file(std::filesystem::path(o.web) / "index.html"))
    throw Error("serve: '" + o.web + "' has no index.html (it is not looplab's web folder)");
  impl_->routes();
  int port = o.port;
  if (o.port == 0) {
    port = impl_->http.bind_to_any_port(o.host);
    if (port < 0) throw Error("serve: cannot bind " + o.host + " to a free port");
  } else if (!impl_->http.bind_to_port(o.host, o.port)) {
    throw Error("serve: cannot bind " + o.host + ":" + std::to_string(o.port) + " (is the port in use?)");
  }
  if (impl_->listen_socket != INVALID_SOCKET) ::listen(impl_->listen_socket, kListenBacklog);
  impl_->bound = true;
  return port;
}

void Server::listen() {
  if (!impl_->bound) throw Error("serve: listen() before bind()");
  impl_->http.listen_after_bind();
}

void Server::stop() {
  if (impl_ && impl_->http.is_running()) impl_->http.stop();
}

}  // namespace looplab::serve
