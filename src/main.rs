//! The `retrygate` binary: parse arguments, run, map the outcome to an exit code.

fn main() -> std::process::ExitCode {
    retrygate::cli::main()
}
