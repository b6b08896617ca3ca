//! `hook-forwarder`: see [`hookd::forwarder`].

fn main() {
    std::process::exit(hookd::forwarder::main());
}
