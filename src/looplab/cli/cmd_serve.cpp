// looplab serve [--port P] [--host H] [--runs DIR] [--sweeps DIR] [--paper FILE] [--web DIR] [--log]: serves the web lab (the
// eight illustrations, the geometry figures, the runs page) and its JSON API until interrupted.
#include "looplab/cli/commands.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "looplab/util/error.h"
#ifndef LOOPLAB_NO_SERVE
#include "looplab/serve/server.h"
#endif

#ifndef LOOPLAB_WEB_DIR
#define LOOPLAB_WEB_DIR "web"
#endif
#ifndef LOOPLAB_PAPER_TABLES
#define LOOPLAB_PAPER_TABLES "sweeps/paper_tables.json"
#endif

namespace looplab::cli {

#ifdef LOOPLAB_NO_SERVE
Command add_serve(CLI::App& parent) {
  auto* app = parent.add_subcommand("serve", "The web lab in a browser (not in this build)");
  app->allow_extras();
  return {app, [] { throw Error("this looplab was built without the web lab (-DLOOPLAB_SERVE=OFF)"); }};
}
#else
Command add_serve(CLI::App& parent) {
  auto* app = parent.add_subcommand("serve", "The web lab in a browser: illustrations, geometry figures, runs");
  auto o = std::make_shared<serve::ServeOptions>();
  o->web.clear();
  app->add_option("--port", o->port, "TCP port (0: any free one)")->capture_default_str();
  app->add_option("--host", o->host, "address to bind (default only this machine)")->capture_default_str();
  app->add_option("--runs", o->runs, "folder whose subfolders are runs (config.json, metrics.jsonl, ...)")
      ->capture_default_str();
  app->add_option("--sweeps", o->sweeps, "folder whose subfolders hold sweep reports (looplab sweep report)")
      ->capture_default_str();
  o->paper_tables = LOOPLAB_PAPER_TABLES;
  auto* paper = app->add_option("--paper", o->paper_tables,
                                "the paper's tables 4-6 as JSON, shown beside the runs of their configurations "
                                "(the default, when absent, shows none)")
                    ->capture_default_str();
  app->add_option("--web", o->web, "the front end (default: ./web if present, else the source tree's web/)");
  app->add_flag("--log", o->log, "print one line per request on stderr");
  return {app, [o, paper] {
            serve::ServeOptions options = *o;
            // A file named on the command line must be there; the compiled-in default may not be
            // (an installed looplab away from its source tree): then no paper values are shown.
            if (paper->count() > 0 && !std::filesystem::is_regular_file(options.paper_tables))
              throw Error("serve: --paper " + options.paper_tables + ": no such file");
            if (options.port < 0 || options.port > 65535)
              throw Error("serve: --port must be in [0, 65535] (got " + std::to_string(options.port) + ")");
            if (options.web.empty())
              options.web = std::filesystem::is_regular_file("web/index.html") ? "web" : LOOPLAB_WEB_DIR;
            serve::Server server(options);
            const int port = server.bind();
            std::printf("looplab serve: http://%s:%d/ (runs: %s, sweeps: %s, web: %s); Ctrl-C stops it\n",
                        options.host.c_str(), port, options.runs.c_str(), options.sweeps.c_str(), options.web.c_str());
            std::fflush(stdout);
            server.listen();
          }};
}
#endif

}  // namespace looplab::cli
