package postgres

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// errBadDSN says a DSN does not parse. It names neither the DSN nor the
// parser's error, which may quote the DSN and its password.
var errBadDSN = errors.New("the store's dsn is not a PostgreSQL connection string (postgres://user:password@host:port/database?param=value, or host=... user=... dbname=... pairs)")

// parseDSN parses a DSN into a pool configuration.
func parseDSN(dsn string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, errBadDSN
	}
	return cfg, nil
}

// ShowDSN names the database dsn connects to as it may be shown in a log
// line or an error: its user, host, port and database, never its password
// or any other parameter. A DSN that does not parse shows as
// "[invalid dsn]".
func ShowDSN(dsn string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "[invalid dsn]"
	}
	return showConfig(cfg)
}

// showConfig is ShowDSN of a parsed DSN, as a URL without password:
// postgres://user@host:port/database, or with the socket folder as a host
// parameter.
func showConfig(cfg *pgx.ConnConfig) string {
	u := url.URL{Scheme: "postgres", User: url.User(cfg.User), Path: "/" + cfg.Database}
	port := strconv.Itoa(int(cfg.Port))
	if strings.HasPrefix(cfg.Host, "/") {
		u.RawQuery = url.Values{"host": {cfg.Host}, "port": {port}}.Encode()
	} else {
		u.Host = net.JoinHostPort(cfg.Host, port)
	}
	return u.String()
}
