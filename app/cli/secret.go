package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/secrets"
)

func newSecretCommand() *cobra.Command {
	withKeyring := func(cmd *cobra.Command, do func(ctx context.Context, k *secrets.Keyring) error) error {
		ctx, cancel := context.WithTimeout(cmd.Context(), app.SecretTimeout)
		defer cancel()
		k, err := secrets.Open(ctx, app.SessionBus(config.ReadEnv()))
		if err != nil {
			return err
		}
		defer k.Close()
		return do(ctx, k)
	}
	set := &cobra.Command{
		Use:   "set NAME",
		Short: "Store a secret in the keyring; the value is read from standard input",
		Long: `set stores the value given on standard input as the keyring secret NAME, replacing
any value it had. On a terminal it asks for the value without echoing it; otherwise it reads
standard input to the end, dropping one final newline. The value is never taken as an argument:
arguments land in shell history and in every process listing.

Use it in the config file as ${secret:NAME}, in a server's env or headers.`,
		Example: `  switchboard secret set github-token          # asks for the value
  printf %s "$TOKEN" | switchboard secret set github-token
  switchboard secret set github-token < token.txt`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return errors.New("secret set: give the secret's NAME, e.g. `switchboard secret set github-token`; the value is read from standard input")
			case len(args) > 1:
				return fmt.Errorf("secret set takes only NAME; give the value on standard input, never as an argument (it would stay in shell history and show in ps): printf %%s \"$TOKEN\" | switchboard secret set %s", args[0])
			}
			return secrets.ValidName(args[0])
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			value, err := readSecretValue(cmd, name)
			if err != nil {
				return err
			}
			return withKeyring(cmd, func(ctx context.Context, k *secrets.Keyring) error {
				if err := k.Store(ctx, name, value); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Stored %s in the keyring. Use it in the config as ${secret:%s}.\n", name, name)
				return nil
			})
		},
	}
	del := &cobra.Command{
		Use:   "delete NAME",
		Short: "Remove a secret from the keyring",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withKeyring(cmd, func(ctx context.Context, k *secrets.Keyring) error {
				err := k.Delete(ctx, args[0])
				if errors.Is(err, secrets.ErrNotFound) {
					return fmt.Errorf("secret %q is not in the keyring (`switchboard secret list` shows the names there)", args[0])
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Deleted %s.\n", args[0])
				return nil
			})
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "Print the names of Switchboard's secrets in the keyring (never their values)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withKeyring(cmd, func(ctx context.Context, k *secrets.Keyring) error {
				names, lockedCount, err := k.List(ctx)
				if err != nil {
					return err
				}
				for _, n := range names {
					fmt.Fprintln(cmd.OutOrStdout(), n)
				}
				// Hints on stderr: stdout stays one name a line, for scripts.
				if lockedCount > 0 {
					fmt.Fprintf(cmd.ErrOrStderr(), "%d more in a locked keyring: unlock it to see their names.\n", lockedCount)
				} else if len(names) == 0 {
					fmt.Fprintln(cmd.ErrOrStderr(), "No secrets stored; `switchboard secret set NAME` adds one.")
				}
				return nil
			})
		},
	}
	root := &cobra.Command{
		Use:   "secret",
		Short: "Keep the tokens of upstream servers in the desktop keyring (${secret:NAME} in the config)",
		Long: `secret stores, lists and removes Switchboard's secrets in the desktop keyring (the
freedesktop Secret Service: gnome-keyring, KeePassXC, KWallet). A server's env or headers in the
config file refer to one as ${secret:NAME}; the hub reads it when it starts the server, and never
logs or shows it. Items carry the attributes application=switchboard name=NAME, so
secret-tool reads and writes them too. Values are never printed.`,
		Args: cobra.NoArgs,
		RunE: list.RunE,
	}
	root.AddCommand(set, del, list)
	return root
}

// readSecretValue reads the value of secret name from the command's standard input: without echo
// on a terminal, else to the end.
func readSecretValue(cmd *cobra.Command, name string) (string, error) {
	in := cmd.InOrStdin()
	if f, ok := in.(*os.File); ok && isTerminal(f) {
		fmt.Fprintf(cmd.ErrOrStderr(), "Value for %s (not shown): ", name)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(cmd.ErrOrStderr())
		if err != nil {
			return "", fmt.Errorf("read the value from the terminal: %w", err)
		}
		if len(b) == 0 {
			return "", errors.New("no value typed; nothing stored")
		}
		return string(b), nil
	}
	b, err := io.ReadAll(io.LimitReader(in, secrets.MaxValue+3)) // + a final CR LF
	if err != nil {
		return "", fmt.Errorf("read the value from standard input: %w", err)
	}
	// The newline echo, a here-string or an editor adds; one, not every trailing one.
	if bytes.HasSuffix(b, []byte("\r\n")) {
		b = b[:len(b)-2]
	} else {
		b = bytes.TrimSuffix(b, []byte("\n"))
	}
	switch {
	case len(b) == 0:
		return "", fmt.Errorf("standard input is empty: give the value there, e.g. printf %%s \"$TOKEN\" | switchboard secret set %s", name)
	case len(b) > secrets.MaxValue:
		return "", fmt.Errorf("the value is longer than %d bytes; a keyring secret holds a token or a password, not a file", secrets.MaxValue)
	case bytes.IndexByte(b, 0) >= 0:
		return "", errors.New("the value contains a NUL byte; it cannot go into an environment variable or a header")
	}
	return string(b), nil
}
