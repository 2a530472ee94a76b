use std::rc::Rc;

use hookpoint::extension;

async fn pause() {}

#[extension(point = "greeting")]
async fn greet(text: &mut String) {
    let shared = Rc::new(String::from("!"));
    pause().await;
    text.push_str(&shared);
}

fn main() {}
