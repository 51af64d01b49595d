package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

// envEditor names the editor `draft edit` runs.
const envEditor = "EDITOR"

// defaultEditor is the editor when $EDITOR is unset.
const defaultEditor = "vi"

// editSession is one `draft edit`: the workspace, where the person types
// the answer to a conflict, and how long the editor may take.
type editSession struct {
	id     string
	stdin  io.Reader
	within time.Duration
}

func newDraftEditCommand(r *remote) *cobra.Command {
	var within time.Duration
	cmd := &cobra.Command{
		Use:   "edit WORKSPACE",
		Short: "Edit the draft document in $EDITOR and save it at its revision",
		Long: `Open the workspace's draft document in $EDITOR (default ` + defaultEditor + `; it may
carry arguments, e.g. "code --wait"), and when the editor exits save what
it left (workflow.draft_workspaces.replace_document) at the revision that
was opened. An unchanged document saves nothing.

If the workspace changed meanwhile, the save is refused: edit shows the
diff from the workspace's new revision to your document and asks whether
to save yours over it (the answer is read from stdin). Without a terminal
it does not ask: it fails with the conflict. Whenever your document is not
saved, it is kept in a file whose name edit prints.`,
		Example: `  EDITOR=nano mcpflow draft edit triage`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if within <= 0 {
				return errors.New("--editor-timeout must be positive")
			}
			e := editSession{id: args[0], stdin: cmd.InOrStdin(), within: within}
			return r.do(cmd, e.run)
		},
	}
	cmd.Flags().DurationVar(&within, "editor-timeout", defaultWaitTimeout, "how long the editor may stay open")
	return cmd
}

func (e *editSession) run(ctx context.Context, c *conn) error {
	w, err := getDocument(ctx, c, e.id)
	if err != nil {
		return err
	}
	before, err := documentJSON(w.Draft)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp("", "mcpflow-draft-"+e.id+"-*.json")
	if err != nil {
		return fmt.Errorf("edit %s: %w", e.id, err)
	}
	path := f.Name()
	_, werr := f.Write(before)
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("edit %s: write %s: %w", e.id, path, err)
	}
	saved, err := e.editAndSave(ctx, c, path, w.Draft, before, w.Revision)
	if saved {
		_ = os.Remove(path)
		return err
	}
	if err != nil {
		return fmt.Errorf("%w (your document is kept in %s)", err, path)
	}
	return nil
}

// editAndSave runs the editor on path and saves what it left at revision.
// saved reports whether path may go: it was saved, or nothing changed.
func (e *editSession) editAndSave(ctx context.Context, c *conn, path string, opened p.Object, before []byte, revision int) (saved bool, err error) {
	if err := e.runEditor(ctx, path); err != nil {
		return false, err
	}
	after, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	if bytes.Equal(after, before) {
		fmt.Fprintf(c.err, "workspace %s: no change\n", e.id)
		return true, nil
	}
	doc, err := decodeObject(after)
	if err != nil {
		return false, fmt.Errorf("the edited document: %w", err)
	}
	if sameJSON(doc, opened) {
		fmt.Fprintf(c.err, "workspace %s: no change (only its layout)\n", e.id)
		return true, nil
	}
	for {
		raw, err := c.call(ctx, p.MethodWorkspaceReplaceDocument, p.ReplaceDocumentParams{WorkspaceID: e.id, Revision: revision, Draft: doc})
		if err != nil {
			return false, err
		}
		var res p.WorkspaceResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return false, fmt.Errorf("%s: decode result: %w", p.MethodWorkspaceReplaceDocument, err)
		}
		if res.Status != draftConflict {
			_, err := show(c, p.MethodWorkspaceReplaceDocument, raw, editTable)
			return true, err
		}
		if revision, err = e.resolve(ctx, c, revision, after); err != nil {
			return false, err
		}
	}
}

// sameJSON reports whether two documents encode the same, whatever their
// layout.
func sameJSON(a, b p.Object) bool {
	da, errA := json.Marshal(a)
	db, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(da, db)
}

// runEditor runs $EDITOR on path, on the process's own terminal.
func (e *editSession) runEditor(ctx context.Context, path string) error {
	editor := firstSet(strings.TrimSpace(os.Getenv(envEditor)), defaultEditor)
	ctx, cancel := context.WithTimeout(ctx, e.within)
	defer cancel()
	// Through the shell, so that $EDITOR may carry arguments; the file is
	// its own argument, never part of the command text.
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", editor+` "$1"`, "mcpflow-editor", path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("editor %s: %w", editor, err)
	}
	return nil
}

// resolve handles a refused save of mine at revision: it shows the diff
// from the workspace as it is now to mine, and asks whether to save mine
// over it. It answers the revision to save at, or the conflict.
func (e *editSession) resolve(ctx context.Context, c *conn, revision int, mine []byte) (int, error) {
	now, err := getDocument(ctx, c, e.id)
	if err != nil {
		return 0, err
	}
	theirs, err := documentJSON(now.Draft)
	if err != nil {
		return 0, err
	}
	conflict := fmt.Errorf("workspace %s changed while you edited it: it is at revision %d, you opened revision %d", e.id, now.Revision, revision)
	fmt.Fprintf(c.err, "%v. From revision %d to yours:\n", conflict, now.Revision)
	writeLineDiff(c.err, fmt.Sprintf("revision %d", now.Revision), "yours", string(theirs), string(mine))
	if !isTerminal(e.stdin) {
		return 0, conflict
	}
	fmt.Fprintf(c.err, "Save yours over revision %d? [y/N] ", now.Revision)
	answer, err := bufio.NewReader(e.stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("read the answer: %w", err)
	}
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return 0, conflict
	}
	return now.Revision, nil
}

// isTerminal reports whether r is a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
