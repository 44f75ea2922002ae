package cli

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/wmcon/wmcon/config"
)

// newConfigCommand is `wmcon config`: the settings in effect and the file they are read from.
func newConfigCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the settings in effect (config file, flags, environment) and the config file's path",
		Long: "wmcon reads your defaults from a config file ($XDG_CONFIG_HOME/wmcon/config.yaml, else\n" +
			"~/.config/wmcon/config.yaml; --config or " + config.FileEnv + " name another). A flag overrides the file,\n" +
			"and the file overrides the built-in defaults; WMCON_AUDIT_LOG overrides the file's auditLog.",
		Example: "  wmcon config view\n  wmcon config view -o yaml\n  wmcon config path",
	}
	cmd.AddCommand(newConfigViewCommand(g), newConfigPathCommand(g))
	return cmd
}

func newConfigViewCommand(g *globalOptions) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Print every setting in effect and where its value came from (flag, env, the file, default)",
		Long: "Prints every setting of the config file as this command line would use it, and where each value\n" +
			"came from: a flag, an environment variable, the file (with its line), or the built-in default.\n" +
			"It needs no cluster, and works with --demo (which keeps its own hosts and audit log).",
		Example: "  wmcon config view\n  wmcon config view -o json\n  wmcon --ssh-user core config view   # the flag wins over the file",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch format {
			case "json":
				return writeJSON(g.stdout, g.settings)
			case "yaml":
				b, err := yaml.Marshal(g.settings)
				if err != nil {
					return err
				}
				_, err = g.stdout.Write(b)
				return err
			case "text":
				return printSettings(g, g.settings)
			}
			return usageErrorf("--output %q: use text, yaml or json", format)
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "text", "text, yaml or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "yaml", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// printSettings prints the settings as a table, after the file they were read from.
func printSettings(g *globalOptions, s settings) error {
	state := "read"
	if !s.Found {
		state = "not found: nothing set by it"
	}
	fmt.Fprintf(g.stdout, "config file: %s (%s; named by %s)\n", s.File, state, s.FileNamed)
	w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SETTING\tVALUE\tFROM")
	for _, v := range s.Settings {
		value := v.Value
		if value == "" {
			value = "-"
		}
		from := v.Source
		switch v.Source {
		case fromFlag, fromEnv:
			from += " " + v.From
		case fromFile:
			from = fmt.Sprintf("%s:%d", v.From, v.Line)
		}
		if v.Note != "" {
			from += " (" + v.Note + ")"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", v.Key, value, from)
	}
	return w.Flush()
}

func newConfigPathCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "path",
		Short:   "Print the path of the config file wmcon reads (it may not exist yet)",
		Example: "  wmcon config path\n  wmcon --config ./wmcon.yaml config path   # the file --config names, made absolute",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, _, _, err := config.FilePath(g.configPath, os.Getenv)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(g.stdout, path)
			return err
		},
	}
}
