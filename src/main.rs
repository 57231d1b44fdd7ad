//! The `onnx-bcast` command line: arguments, rendering and exit codes. The contract it keeps is
//! `../shared/CONTRACT.md`; all work is done by the library.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Output cut short by its reader (`onnx-bcast infer m.onnx | head`) ends the process
    // quietly, as it ends other command-line tools, instead of failing a write to stdout.
    #[cfg(unix)]
    // SAFETY: restores the default action of one signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args = cli::Cli::parse();
    // A pass returns once its output is out, not once its memory is given back.
    let detached = if args.is_pass() { cli::detach::detach() } else { None };
    let code = match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("onnx-bcast: {e}");
            cli::FAILED
        }
    };
    if let Some(d) = detached {
        d.finish(code);
    }
    ExitCode::from(code)
}
