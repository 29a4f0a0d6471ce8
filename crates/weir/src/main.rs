//! The `weir` binary: parse the command line, run one subcommand, map its outcome to an exit
//! code (0 success, 1 runtime failure or finding, 2 usage error). Everything else lives in the
//! library crates; each subcommand's flags and glue live in `cmd/<name>.rs`.

mod cmd;
mod error;
mod interrupt;

use clap::{CommandFactory, Parser, Subcommand};

/// Know your disk, and use all of it without drowning latency-sensitive reads.
#[derive(Parser)]
#[command(name = "weir", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run io_tester-compatible job files and report exact latency percentiles.
    Run(cmd::run::RunArgs),
    /// Measure a disk's read/write IOPS and bandwidth and write io-properties.yaml.
    Tune(cmd::tune::TuneArgs),
    /// Check whether a filesystem really performs asynchronous direct I/O (fsqual, extended).
    Qualify(cmd::qualify::QualifyArgs),
    /// Check the device stack and filesystem under a directory for performance pitfalls.
    Doctor(cmd::doctor::DoctorArgs),
    /// Map written requests to device addresses and report their alignment.
    Align(cmd::align::AlignArgs),
    /// Map read latency under mixed reads and writes, find the boundary, fit the model.
    Explore(cmd::explore::ExploreArgs),
    /// Run doctor, qualify, tune, explore, a QoS demo and align, and write one HTML page.
    Report(cmd::report::ReportArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(cmd::completions::CompletionsArgs),
    /// Print the man page, or write one per subcommand with --out-dir.
    Man(cmd::completions::ManArgs),
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout with exit 0, and usage errors with exit 2.
            e.exit();
        }
    };
    engine_switches();
    // Commands that make test files stop on SIGINT/SIGTERM through the flag their loops poll,
    // and remove the files: the handler goes in before anything is created. (A failure is
    // reported by the command's own install, which names the command.)
    if matches!(
        cli.command,
        Command::Run(_) | Command::Tune(_) | Command::Explore(_) | Command::Report(_)
    ) {
        let _ = interrupt::install();
    }
    let outcome = match cli.command {
        Command::Run(args) => cmd::run::run(args),
        Command::Tune(args) => cmd::tune::run(args),
        Command::Qualify(args) => cmd::qualify::run(args),
        Command::Doctor(args) => cmd::doctor::run(args),
        Command::Align(args) => cmd::align::run(args),
        Command::Explore(args) => cmd::explore::run(args),
        Command::Report(args) => cmd::report::run(args),
        Command::Completions(args) => cmd::completions::completions(args, Cli::command()),
        Command::Man(args) => cmd::completions::man(args, Cli::command()),
    };
    if let Err(e) = outcome {
        eprintln!("weir: error: {e}");
        std::process::exit(e.exit_code());
    }
}

/// The engine's A/B switches (`WEIR_URING_*`, `WEIR_DEVICE_ATIME`; docs/engine.md), read
/// from the environment here, where the binary owns it, and handed to the engine as values
/// before any device opens. A value the engine does not know is reported and left at its
/// default: an A/B switch must not stop a run.
fn engine_switches() {
    let (options, notes) =
        weir_engine::EngineOptions::from_switches(|name| std::env::var(name).ok());
    for note in notes {
        eprintln!("weir: {note}");
    }
    // Nothing has opened a device yet, so the options are not set.
    let _ = weir_engine::set_engine_options(options);
}
