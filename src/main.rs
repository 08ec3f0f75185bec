use clap::Parser;

fn main() {
    let _cli = mediaedit::config::Cli::parse();
}
