//! A crate plugin: extensions that come and go together, with a typed config read from
//! `<layer>/plugins/<name>/config.json` and a switch at run time: `cargo run -p
//! hookpoint-examples --example plugin_crate`. A real one is its own crate, linked with
//! `hookpoint::link!(my_plugin)`; here it lives in the example.

use hookpoint::{LayerKind, LayerSpec, ScopeBuilder, extension, plugin, point};

/// A reply being sent.
pub struct Reply {
    /// Its text.
    pub text: String,
}

point! {
    /// Runs before a reply is sent.
    pub static REPLY: SyncPoint<Reply> = "plugin.reply";
}

/// The plugin's config: every key has a default.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SignatureConfig {
    /// The line added under each reply.
    pub signature: String,
}

plugin! {
    /// Signs replies.
    pub static SIGNATURE: Plugin<SignatureConfig> = {
        name: "signature",
        description: "Adds a signature under each reply.",
    };
}

#[extension(point = REPLY)]
fn sign(reply: &mut Reply) -> Result<(), hookpoint::Error> {
    let config = SIGNATURE.config()?;
    reply.text.push_str(&format!("\n-- {}", config.signature));
    Ok(())
}

fn send(scope: &hookpoint::Scope) -> Result<String, hookpoint::Error> {
    let mut reply = Reply {
        text: "Your order has shipped.".into(),
    };
    scope.enter(|| REPLY.call(&mut reply))?;
    Ok(reply.text)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let folder = tempfile::tempdir()?;
    let config = folder.path().join("plugins/signature/config.json");
    std::fs::create_dir_all(config.parent().expect("a parent"))?;
    std::fs::write(&config, r#"{"signature": "The Shop"}"#)?;
    let scope = ScopeBuilder::new("plugin-example")
        .layer(folder.path(), LayerSpec::new(LayerKind::new("user"), 10))
        .watch(false)
        .build()?;
    println!("{}", send(&scope)?);
    scope.set_plugin_enabled("signature", false)?;
    println!("{}", send(&scope)?);
    Ok(())
}
