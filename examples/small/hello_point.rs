//! A point, two extensions on it, one call: `cargo run -p hookpoint-examples --example
//! hello_point`. Extensions attach at link time, lower order first; the point's list is what
//! `introspect` shows.

use hookpoint::{extension, point};

/// What the extensions build.
pub struct Greeting {
    /// The words so far.
    pub words: Vec<String>,
}

point! {
    /// Assembled before a greeting is shown.
    pub static GREETING: SyncPoint<Greeting> = "hello.greeting";
}

#[extension(point = GREETING, order = 10)]
fn hello(g: &mut Greeting) {
    g.words.push("Hello".into());
}

#[extension(point = GREETING, order = 20)]
fn world(g: &mut Greeting) -> Result<(), hookpoint::Error> {
    g.words.push("world".into());
    Ok(())
}

fn main() -> Result<(), hookpoint::Error> {
    let mut greeting = Greeting { words: Vec::new() };
    GREETING.call(&mut greeting)?;
    println!("{}", greeting.words.join(", "));
    let point = hookpoint::introspect()
        .into_iter()
        .find(|p| p.name == "hello.greeting")
        .expect("declared");
    for e in &point.extensions {
        println!("{} order {}", e.name, e.order);
    }
    Ok(())
}
