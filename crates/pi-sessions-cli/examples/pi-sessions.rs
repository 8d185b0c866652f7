//! The CLI as a plain binary, for development without building the Node addon:
//! `cargo run -p pi-sessions-cli --example pi-sessions -- list --all`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let env = pi_sessions_cli::CliEnv::from_process();
    let code = {
        let stdout = std::io::stdout();
        let stderr = std::io::stderr();
        let mut out = stdout.lock();
        let mut err = stderr.lock();
        pi_sessions_cli::run(&args, &env, &mut out, &mut err)
    };
    std::process::exit(code);
}
