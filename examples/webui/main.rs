//! The web UI example: serves the application's web UI extensions and an override folder to a
//! browser, live.
//!
//! ```text
//! cargo run --example webui                 # prints the URL; open it; Ctrl-C stops
//! cargo run --example webui -- --port 8080
//! ```
//!
//! The page has two anchors, `banner` (an HTML component) and `status` (a JavaScript module that
//! asks the server for its uptime over the WebSocket, answered by an extension on
//! `webui_ws_event`). The override folder replaces `banner/_10_welcome.html` by name. A third
//! anchor, `memory`, shows the memory plugin's dashboard (from the folder the plugin crate
//! ships): list, search and delete the memories of a database seeded in the staged folder. Edit
//! the staged files the example prints and the page updates without a reload.

use clap::Parser;
use hookpoint_examples::webui::{WebuiServer, demo_scope, stage};

/// Command-line options.
#[derive(Parser, Debug)]
#[command(about = "hookpoint's web UI extensions in a browser, updated live")]
struct Args {
    /// The port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let staged = stage::stage()?;
    let scope = demo_scope(&staged)?;
    for p in scope.status().problems {
        eprintln!("warning: {p}");
    }
    let server = WebuiServer::start(scope, args.port).await?;
    println!("hookpoint web UI example: {}", server.url());
    println!("  application layer: {}", staged.app.display());
    println!("  override layer:    {}", staged.overrides.display());
    println!("  memory database:   {}", staged.memory.display());
    println!(
        "Edit a file under extensions/webui/ in either folder; the page updates. Ctrl-C stops."
    );
    tokio::signal::ctrl_c().await?;
    server.stop().await;
    Ok(())
}
