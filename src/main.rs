//! Entry point: parse arguments, run, print the error chain.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = afterburner::cli::Cli::parse();
    match afterburner::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
