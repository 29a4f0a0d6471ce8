//! `weir completions SHELL` and `weir man`: shell completions and man pages generated from the
//! same clap definitions that parse the command line, so neither can disagree with `--help`.

use std::path::PathBuf;

use clap::{Args, Command};
use clap_complete::Shell;

use crate::error::{CliError, OutputFile, RuntimeError};

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for; the script is printed to stdout. Install with, e.g.,
    /// `weir completions bash > /etc/bash_completion.d/weir` or
    /// `weir completions zsh > "${fpath[1]}/_weir"`.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write weir.1 and one page per subcommand (weir-run.1, weir-tune.1, ...) into this
    /// directory (created if missing). Without it, weir.1 is printed to stdout
    /// (`weir man | man -l -`).
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

/// Prints the completion script for `args.shell` of the command line `cli`.
pub fn completions(args: CompletionsArgs, mut cli: Command) -> Result<(), CliError> {
    let name = cli.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cli, name, &mut script);
    print_bytes(&script)
}

/// Writes `bytes` to stdout; a reader that went away (`weir man | head`) is not an error.
fn print_bytes(bytes: &[u8]) -> Result<(), CliError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(RuntimeError::Write {
            file: OutputFile::ManPages,
            path: PathBuf::from("-"),
            error: e,
        }
        .into()),
        _ => Ok(()),
    }
}

/// Prints weir.1, or writes every page into `args.out_dir`.
pub fn man(args: ManArgs, cli: Command) -> Result<(), CliError> {
    let write_error = |path: PathBuf, error: std::io::Error| {
        CliError::from(RuntimeError::Write {
            file: OutputFile::ManPages,
            path,
            error,
        })
    };
    match args.out_dir {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cli)
                .render(&mut page)
                .map_err(|e| write_error(PathBuf::from("-"), e))?;
            print_bytes(&page)?;
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir).map_err(|e| write_error(dir.clone(), e))?;
            clap_mangen::generate_to(cli, &dir).map_err(|e| write_error(dir.clone(), e))?;
            println!("man pages written to {}", dir.display());
        }
    }
    Ok(())
}
