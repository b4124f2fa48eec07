"""A scripted HTTP server on 127.0.0.1 for the LLM client's tests.

    python3 loopback_server.py SCRIPT.json PORT_FILE

SCRIPT.json is a list of replies, one per request in order:
{"status": 200, "headers": {"Retry-After": "1"}, "body": "...",
 "delay": 0.0, "repeat_body": 1}. The server writes the port it listens on
to PORT_FILE, answers the scripted replies (after "delay" seconds; the body
"repeat_body" times over), appends each request's path, headers and body
to SCRIPT.json + ".requests" as JSON lines, and exits after the last reply.
Standard library only.
"""

import http.server
import json
import os
import sys
import time


def main():
    script_path, port_file = sys.argv[1], sys.argv[2]
    with open(script_path, encoding="utf-8") as f:
        replies = json.load(f)
    log_path = script_path + ".requests"

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length).decode("utf-8", "replace")
            with open(log_path, "a", encoding="utf-8") as log:
                log.write(json.dumps({"path": self.path,
                                      "headers": dict(self.headers),
                                      "body": body}) + "\n")
            reply = replies[self.server.served]
            self.server.served += 1
            time.sleep(reply.get("delay", 0))
            data = (reply.get("body", "") * reply.get("repeat_body", 1))
            data = data.encode("utf-8")
            try:
                self.send_response(reply.get("status", 200))
                for name, value in reply.get("headers", {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    server.served = 0
    tmp = port_file + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, port_file)
    while server.served < len(replies):
        server.handle_request()


if __name__ == "__main__":
    main()
