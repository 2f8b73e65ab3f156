package loop

import (
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

// bindHold binds the abstract datagram socket name: errHeld when another
// process has it. Nothing reads from it; it is there to be asked for.
func bindHold(name string) (io.Closer, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("a unix socket: %w", err)
	}
	err = unix.Bind(fd, &unix.SockaddrUnix{Name: name})
	if errors.Is(err, unix.EADDRINUSE) {
		unix.Close(fd)
		return nil, errHeld
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("binding a unix socket: %w", err)
	}
	return socketFD(fd), nil
}

type socketFD int

func (fd socketFD) Close() error { return unix.Close(int(fd)) }

// holdBound reports whether a process has bound the abstract socket name.
// It asks by connecting a datagram socket to it, which binds nothing:
// any number of processes can ask at once without one of them seeing
// another as the holder (a probe that bound the name would). A system that
// refuses the question gives no answer (false): the lock file is then
// asked alone.
func holdBound(name string) bool {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	for {
		err = unix.Connect(fd, &unix.SockaddrUnix{Name: name})
		if err != unix.EINTR {
			break
		}
	}
	return err == nil
}
