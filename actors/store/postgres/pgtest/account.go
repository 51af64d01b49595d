package pgtest

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
)

// serverUser is the account the server runs as when the tests run as root:
// initdb and postgres refuse to run as root. Debian's postgresql package
// creates it.
const serverUser = "postgres"

// account is who runs initdb and postgres: the current user (asRoot
// false), or serverUser when the tests run as root.
type account struct {
	asRoot   bool
	uid, gid int
}

// serverAccount returns the account to run the server as.
func serverAccount() (account, error) {
	if os.Geteuid() != 0 {
		return account{}, nil
	}
	u, err := user.Lookup(serverUser)
	if err != nil {
		return account{}, fmt.Errorf("running as root, which initdb refuses, and there is no %q user to run PostgreSQL as (useradd --system %s): %w",
			serverUser, serverUser, err)
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return account{}, fmt.Errorf("user %q: uid %q: %w", serverUser, u.Uid, err)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return account{}, fmt.Errorf("user %q: gid %q: %w", serverUser, u.Gid, err)
	}
	return account{asRoot: true, uid: uid, gid: gid}, nil
}

// own gives path to the account, so that the server can write there.
func (a account) own(path string) error {
	if !a.asRoot {
		return nil
	}
	return os.Chown(path, a.uid, a.gid)
}
