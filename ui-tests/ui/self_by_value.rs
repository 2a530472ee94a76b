use hookpoint::extensible;

pub struct Agent {
    pub name: String,
}

#[extensible]
impl Agent {
    #[extensible]
    pub fn into_name(self) -> String {
        self.name
    }
}

fn main() {}
