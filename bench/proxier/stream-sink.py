"""The pods' end of the steady stream: accepts connections one at a time and reads each to its end. Prints
"ready" once listening, then per connection one JSON object: bytes read and this process's CPU while it read
them (ns, from /proc/self/schedstat, as stream-send.py measures its own).

    python3 stream-sink.py PORT
"""

import json
import socket
import sys


def run_time_ns() -> int:
    with open("/proc/self/schedstat") as f:
        return int(f.read().split()[0])


def main() -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", int(sys.argv[1])))
    server.listen(8)
    print("ready", flush=True)
    buf = bytearray(1 << 16)
    while True:
        conn, _ = server.accept()
        cpu0 = run_time_ns()
        received = 0
        while True:
            n = conn.recv_into(buf)
            if n == 0:
                break
            received += n
        cpu_ns = run_time_ns() - cpu0
        conn.close()
        print(json.dumps({"bytes": received, "cpuNs": cpu_ns}), flush=True)


main()
