/**
 * A pseudo-terminal for a tty exec. Node has no pty API, and `script -c` cannot be resized from outside (its
 * own stdin is a pipe here, so it never sees a SIGWINCH), so this is a small python3 program using the pty
 * module: it runs argv on a fresh pty as its session's controlling terminal, relays stdin (fd 0) to the pty and
 * the pty to stdout (fd 1), and applies each "rows cols" line read on fd 3 with TIOCSWINSZ (the kernel then
 * sends the foreground process a SIGWINCH). The initial size, when known, is set before the command starts so
 * its first `stty size` is right. It exits with the command's exit code (128+n for signal n).
 *
 *   python3 -c ptyRelayProgram ROWS COLS argv...   (ROWS and COLS 0: no initial size)
 */
export const ptyRelayProgram = `
import fcntl, os, select, signal, struct, sys, termios

def set_size(fd, rows, cols):
    if rows > 0 and cols > 0:
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

def write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]

rows, cols, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
master, slave = os.openpty()
set_size(master, rows, cols)
pid = os.fork()
if pid == 0:
    os.close(master)
    os.login_tty(slave)
    os.closerange(3, 256)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.execvp(argv[0], argv)
os.close(slave)
inputs, resizes = [0, 3, master], b""
while True:
    ready = select.select(inputs, [], [])[0]
    if master in ready:
        try:
            data = os.read(master, 65536)
        except OSError:
            data = b""  # EIO: every process holding the terminal has closed it
        if not data:
            break
        write_all(1, data)
    if 0 in ready:
        data = os.read(0, 65536)
        if data:
            write_all(master, data)
        else:
            inputs.remove(0)
    if 3 in ready:
        data = os.read(3, 4096)
        if not data:
            inputs.remove(3)
        resizes += data
        while b"\\n" in resizes:
            line, resizes = resizes.split(b"\\n", 1)
            r, c = (int(v) for v in line.split())
            set_size(master, r, c)
status = os.waitpid(pid, 0)[1]
code = os.waitstatus_to_exitcode(status)
sys.exit(128 - code if code < 0 else code)
`;
