//! The `retrygate` binary: parse arguments, run, map the outcome to an exit code.

/// syn allocates for every token; with both cores parsing, glibc's malloc
/// spent about a third of the scan's time in locks and bookkeeping
/// (measured with perf on the scan benchmark). mimalloc's per-thread heaps
/// avoid that.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    retrygate::cli::main()
}
