//! Tables, printed for the terminal and written as Markdown.

/// A table: header and lines of cells.
pub struct Table {
    pub header: Vec<String>,
    pub lines: Vec<Vec<String>>,
}

impl Table {
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "| {} |\n|{}\n",
            self.header.join(" | "),
            "---|".repeat(self.header.len())
        );
        for line in &self.lines {
            s += &format!("| {} |\n", line.join(" | "));
        }
        s
    }

    pub fn print(&self) {
        let widths: Vec<usize> = (0..self.header.len())
            .map(|c| {
                std::iter::once(&self.header[c])
                    .chain(self.lines.iter().map(|l| &l[c]))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let pad =
            |s: &str, w: usize| format!("{s}{}", " ".repeat(w.saturating_sub(s.chars().count())));
        let line = |cells: &[String]| {
            cells
                .iter()
                .zip(&widths)
                .map(|(h, w)| pad(h, *w))
                .collect::<Vec<_>>()
                .join("  ")
        };
        println!();
        println!("{}", line(&self.header));
        for l in &self.lines {
            println!("{}", line(l));
        }
    }
}
