use hookpoint::extensible;

pub struct Agent {
    pub name: String,
}

impl Agent {
    #[extensible]
    pub fn rename(&mut self, name: String) {
        self.name = name;
    }
}

fn main() {}
