//! An async `#[extensible]` method taking `&mut self`.
use hookpoint::{CallStart, extensible, extension};

pub struct Agent {
    pub errors: Vec<String>,
}

#[extensible]
impl Agent {
    #[extensible]
    pub async fn handle_exception(&mut self, err: String) -> Result<(), String> {
        self.errors.push(err);
        Ok(())
    }
}

#[extension(point = Agent::HANDLE_EXCEPTION_START)]
fn tag(call: &mut CallStart<(String,), Result<(), String>, &mut Agent>) {
    call.args.0.insert_str(0, "agent: ");
}

fn main() {
    let mut agent = Agent { errors: vec![] };
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(agent.handle_exception("boom".into())).unwrap();
    assert_eq!(agent.errors, ["agent: boom"]);
}
