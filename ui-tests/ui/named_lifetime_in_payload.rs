use hookpoint::extension;

pub struct ToolCall<'a> {
    pub name: &'a str,
}

#[extension(point = "tool_call")]
fn log_call<'a>(call: &mut ToolCall<'a>) {
    println!("{}", call.name);
}

fn main() {}
