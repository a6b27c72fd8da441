"""New TCP connections per second, TCP_CRR-style: connect, read the answer to its end, close, again, for a fixed
time in each of N forked workers. The pods' servers answer on accept and close first, so one exchange is the
request/response and no client port is left in TIME_WAIT for a later connect to step around. Targets
(host:port) are taken in turn, so a pod-IP ceiling spreads over the pods as a Service does.

    python3 connect-rate.py SECONDS WORKERS HOST:PORT [HOST:PORT ...]

Prints one JSON object: successes, failures by error, the elapsed time, and the workers' own CPU (user and
system, from getrusage) so the reader can see what the client itself costs per connection.
"""

import errno
import json
import os
import resource
import socket
import sys
import time

# A lost SYN is retransmitted after 1 s: such a connection counts as failed, not as a slow success.
TIMEOUT_S = 1.0


def error_name(err: OSError) -> str:
    if isinstance(err, TimeoutError) or isinstance(err, socket.timeout):
        return "ETIMEDOUT"
    return errno.errorcode.get(err.errno, type(err).__name__) if err.errno else type(err).__name__


def one(target: tuple[str, int]) -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.settimeout(TIMEOUT_S)
        s.connect(target)
        while s.recv(4096):
            pass
    finally:
        s.close()


def worker(deadline: float, targets: list[tuple[str, int]], first: int, out: int) -> None:
    ok = 0
    failed: dict[str, int] = {}
    k = first
    while time.monotonic() < deadline:
        try:
            one(targets[k % len(targets)])
            ok += 1
        except OSError as err:
            name = error_name(err)
            failed[name] = failed.get(name, 0) + 1
        k += 1
    os.write(out, (json.dumps([ok, failed]) + "\n").encode())


def main() -> None:
    seconds, workers = float(sys.argv[1]), int(sys.argv[2])
    targets = [(t.rsplit(":", 1)[0], int(t.rsplit(":", 1)[1])) for t in sys.argv[3:]]
    read_end, write_end = os.pipe()
    started = time.monotonic()
    deadline = started + seconds
    children = []
    for w in range(workers):
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            worker(deadline, targets, w, write_end)
            os._exit(0)
        children.append(pid)
    os.close(write_end)
    for pid in children:
        os.waitpid(pid, 0)
    elapsed = time.monotonic() - started
    ok = 0
    failed: dict[str, int] = {}
    with os.fdopen(read_end) as lines:
        for line in lines:
            o, f = json.loads(line)
            ok += o
            for name, n in f.items():
                failed[name] = failed.get(name, 0) + n
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        json.dumps(
            {
                "ok": ok,
                "failed": failed,
                "seconds": elapsed,
                "clientUserS": usage.ru_utime,
                "clientSystemS": usage.ru_stime,
            }
        )
    )


main()
