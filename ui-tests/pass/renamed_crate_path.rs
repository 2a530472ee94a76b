//! `crate = path` on both attributes reaches a renamed hookpoint dependency.
extern crate hookpoint as hp;

#[hp::extensible(crate = hp)]
pub fn shout(text: String) -> String {
    text.to_uppercase()
}

#[hp::extension(point = SHOUT_START, crate = hp)]
fn add_bang(call: &mut hp::CallStart<(String,), String>) {
    call.args.0.push('!');
}

#[hp::extension(point = "pass_renamed_count", crate = hp)]
fn double(n: &mut u64) {
    *n *= 2;
}

pub struct Agent {
    pub name: String,
}

#[hp::extensible(crate = hp)]
impl Agent {
    #[hp::extensible]
    pub fn greet(&self) -> String {
        format!("hello, {}", self.name)
    }
}

fn main() {
    assert_eq!(shout("hi".into()), "HI!");
    let mut n: u64 = 21;
    hp::call!("pass_renamed_count", &mut n).unwrap();
    assert_eq!(n, 42);
    let agent = Agent {
        name: "zero".into(),
    };
    assert_eq!(agent.greet(), "hello, zero");
}
