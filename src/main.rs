//! Entry point: parse arguments, run, print the error chain.

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = afterburner::cli::parse();
    afterburner::interrupt::install();
    let error_status = cli.error_status();
    match afterburner::cli::run(cli) {
        Ok(status) => status,
        // `afterburner … | head -1`: the reader had what it wanted.
        Err(err) if afterburner::stdout::closed(&err) => ExitCode::SUCCESS,
        Err(err) if afterburner::interrupt::requested() => {
            eprintln!("error: {}", afterburner::interrupt::Interrupted);
            eprintln!("(while: {err:#})");
            // 128 + SIGINT, as shells report an interrupted command.
            ExitCode::from(130)
        }
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(error_status)
        }
    }
}
