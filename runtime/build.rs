// Exists only so that the `links` key in Cargo.toml is accepted: cargo then
// refuses to build a graph holding two copies of hookpoint, which would each
// keep their own extension registry.
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
}
