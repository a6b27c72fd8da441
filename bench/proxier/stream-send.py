"""One steady TCP stream: connects, sends 64 KiB writes for a fixed time, half-closes and waits for the sink to
close; a stream that stalls for 10 s ends with an error instead. Prints one JSON object: bytes sent, the time, and this process's CPU over the stream (ns, from
/proc/self/schedstat: the scheduler's run time, which on a kernel without IRQ time accounting includes the
softirq packet processing that ran while this process was on the CPU).

    python3 stream-send.py HOST PORT SECONDS
"""

import json
import socket
import sys
import time


def run_time_ns() -> int:
    with open("/proc/self/schedstat") as f:
        return int(f.read().split()[0])


def main() -> None:
    host, port, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    s = socket.create_connection((host, port), timeout=2)
    s.settimeout(10)
    chunk = b"x" * (1 << 16)
    sent = 0
    cpu0 = run_time_ns()
    started = time.monotonic()
    deadline = started + seconds
    while time.monotonic() < deadline:
        s.sendall(chunk)
        sent += len(chunk)
    s.shutdown(socket.SHUT_WR)
    s.recv(1)  # the sink's close: every byte was read
    elapsed = time.monotonic() - started
    cpu_ns = run_time_ns() - cpu0
    s.close()
    print(json.dumps({"bytes": sent, "seconds": elapsed, "cpuNs": cpu_ns}))


main()
