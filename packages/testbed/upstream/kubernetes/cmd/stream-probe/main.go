// Command stream-probe is a test client for the lab's kubelet streaming server: it drives exec/attach and
// port-forward through client-go's own SPDY code, so the lab's tests check the server against the real client
// rather than against a second implementation written by the same hands.
//
//	stream-probe exec URL [-stdin] [-tty] [-size 80x24] [-protocols v3.channel.k8s.io,v2.channel.k8s.io]
//	    POSTs to URL (its query carries stdin/stdout/stderr/tty/command), copies this process's stdin to the
//	    remote stdin, the remote stdout and stderr to its own, and exits with the remote exit code. Any other
//	    failure prints "stream-probe: ..." on stderr and exits 100. -protocols narrows what the client offers
//	    (client-go's own list, v5 to v1, by default).
//	stream-probe portforward URL PORT
//	    forwards an ephemeral local port to the remote PORT, prints "listening LOCALPORT" on stdout once ready,
//	    and runs until its stdin closes.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/client-go/util/exec"
)

const probeFailure = 100

func main() {
	if len(os.Args) < 3 {
		fail(errors.New("usage: stream-probe exec|portforward URL ..."))
	}
	target, err := url.Parse(os.Args[2])
	if err != nil {
		fail(err)
	}
	// Only the scheme and host matter to the transport; the full URL (path and query) is what gets requested.
	config := &rest.Config{Host: target.Scheme + "://" + target.Host}
	switch os.Args[1] {
	case "exec":
		os.Exit(runExec(config, target, os.Args[3:]))
	case "portforward":
		if len(os.Args) != 4 {
			fail(errors.New("usage: stream-probe portforward URL PORT"))
		}
		fail(runPortForward(config, target, os.Args[3]))
	default:
		fail(fmt.Errorf("unknown mode %q", os.Args[1]))
	}
}

func fail(err error) {
	if err == nil {
		os.Exit(0)
	}
	fmt.Fprintf(os.Stderr, "stream-probe: %v\n", err)
	os.Exit(probeFailure)
}

func runExec(config *rest.Config, target *url.URL, args []string) int {
	flags := flag.NewFlagSet("exec", flag.ExitOnError)
	withStdin := flags.Bool("stdin", false, "send this process's stdin")
	tty := flags.Bool("tty", false, "ask for a terminal (stderr is then merged into stdout)")
	size := flags.String("size", "", "send one terminal size, WIDTHxHEIGHT")
	protocols := flags.String("protocols", "", "comma-separated stream protocols to offer instead of client-go's list")
	_ = flags.Parse(args)

	executor, err := newExecutor(config, target, *protocols)
	if err != nil {
		fail(err)
	}
	options := remotecommand.StreamOptions{Stdout: os.Stdout, Tty: *tty}
	if !*tty {
		options.Stderr = os.Stderr
	}
	if *withStdin {
		options.Stdin = os.Stdin
	}
	if *size != "" {
		options.TerminalSizeQueue = oneSize(*size)
	}
	err = executor.Stream(options)
	var exitErr exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exitErr):
		return exitErr.ExitStatus()
	default:
		fail(err)
		return probeFailure
	}
}

func newExecutor(config *rest.Config, target *url.URL, protocols string) (remotecommand.Executor, error) {
	if protocols == "" {
		return remotecommand.NewSPDYExecutor(config, http.MethodPost, target)
	}
	transport, upgrader, err := spdy.RoundTripperFor(config)
	if err != nil {
		return nil, err
	}
	offered := strings.Split(protocols, ",")
	return remotecommand.NewSPDYExecutorForProtocols(transport, upgrader, http.MethodPost, target, offered...)
}

// singleSize yields one terminal size, then reports the queue closed (nil).
type singleSize struct {
	sizes chan remotecommand.TerminalSize
}

func (q singleSize) Next() *remotecommand.TerminalSize {
	size, ok := <-q.sizes
	if !ok {
		return nil
	}
	return &size
}

func oneSize(spec string) remotecommand.TerminalSizeQueue {
	width, height, found := strings.Cut(spec, "x")
	w, errW := strconv.ParseUint(width, 10, 16)
	h, errH := strconv.ParseUint(height, 10, 16)
	if !found || errW != nil || errH != nil {
		fail(fmt.Errorf("bad -size %q, want WIDTHxHEIGHT", spec))
	}
	queue := singleSize{sizes: make(chan remotecommand.TerminalSize, 1)}
	queue.sizes <- remotecommand.TerminalSize{Width: uint16(w), Height: uint16(h)}
	close(queue.sizes)
	return queue
}

func runPortForward(config *rest.Config, target *url.URL, port string) error {
	transport, upgrader, err := spdy.RoundTripperFor(config)
	if err != nil {
		return err
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, target)
	stop := make(chan struct{})
	ready := make(chan struct{})
	forwarder, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{":" + port}, stop, ready, io.Discard, os.Stderr)
	if err != nil {
		return err
	}
	go func() {
		// The test ends the forwarding by closing our stdin.
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(stop)
	}()
	go func() {
		<-ready
		ports, err := forwarder.GetPorts()
		if err != nil || len(ports) == 0 {
			fail(fmt.Errorf("no forwarded port: %v", err))
		}
		fmt.Printf("listening %d\n", ports[0].Local)
	}()
	return forwarder.ForwardPorts()
}
