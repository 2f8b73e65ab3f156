package loop

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// bindHold binds the abstract datagram socket name: errHeld when another
// process has it. It is there to be asked for, and to receive the
// refusals of commands run while it is held (noteHold), which it keeps
// queued until the driver drains them.
func bindHold(name string) (holdSocket, error) {
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
	// The kernel says who sent each message: only this user's count.
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PASSCRED, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("a unix socket: %w", err)
	}
	return socketFD(fd), nil
}

type socketFD int

func (fd socketFD) Close() error { return unix.Close(int(fd)) }

// drain returns the messages queued, each sent by a process of this user,
// without waiting for more.
func (fd socketFD) drain() [][]byte {
	var out [][]byte
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(unix.SizeofUcred))
	uid := uint32(os.Getuid())
	for len(out) < maxRefused {
		n, oobn, _, _, err := unix.Recvmsg(int(fd), buf, oob, unix.MSG_DONTWAIT)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			break
		}
		if !sentBy(oob[:oobn], uid) {
			continue
		}
		out = append(out, append([]byte(nil), buf[:n]...))
	}
	return out
}

// sentBy reports whether a message's credentials name user uid.
func sentBy(oob []byte, uid uint32) bool {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return false
	}
	for _, m := range msgs {
		if cred, err := unix.ParseUnixCredentials(&m); err == nil && cred.Uid == uid {
			return true
		}
	}
	return false
}

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

// noteHold sends msg to the holder of the abstract socket name, without
// waiting: a holder whose queue is full, or none, does not get it.
func noteHold(name string, msg []byte) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	_ = unix.Sendto(fd, msg, unix.MSG_DONTWAIT, &unix.SockaddrUnix{Name: name})
}
