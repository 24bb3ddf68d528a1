//! virsh's output shapes: its tables (`vshTable`: a leading space per cell, columns padded to
//! their widest cell plus two, a rule of `width + 3` dashes per column), its `%-15s` label
//! lines and its sizes (`1.00 GiB`).

/// A table printed the way virsh prints its lists.
pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers.
    pub fn new(header: &[&str]) -> Self {
        Self {
            rows: vec![header.iter().map(|h| (*h).to_string()).collect()],
        }
    }

    /// Add a row (as many cells as the header).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as text: header, rule, rows; each line ends with a newline.
    pub fn render(&self) -> String {
        let cols = self.rows[0].len();
        // virsh -q drops the header and its rule, and so does not count it in the widths.
        let skip = usize::from(crate::quiet());
        let mut widths = vec![0usize; cols];
        for row in self.rows.iter().skip(skip) {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for (i, row) in self.rows.iter().enumerate().skip(skip) {
            for (j, cell) in row.iter().enumerate() {
                out.push(' ');
                out.push_str(cell);
                if j + 1 < cols {
                    let pad = widths[j] - cell.chars().count() + 2;
                    out.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push('\n');
            if i == 0 {
                let dashes: usize = widths.iter().map(|w| w + 3).sum();
                out.extend(std::iter::repeat_n('-', dashes));
                out.push('\n');
            }
        }
        out
    }
}

/// One `Label: value` line as virsh prints it (`%-15s %s`).
pub fn field(label: &str, value: impl std::fmt::Display) -> String {
    format!("{label:<15} {value}\n")
}

/// A size the way virsh prints it (`vshPrettyCapacity`): two decimals and a binary unit.
pub fn pretty_size(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes}.00 B");
    }
    #[allow(clippy::cast_precision_loss, reason = "a display value")]
    let mut v = bytes as f64 / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{v:.2} {unit}")
}

/// yes/no, as virsh prints booleans.
pub fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_pad_like_virsh() {
        let mut t = Table::new(&["Id", "Name", "State"]);
        t.row(vec!["1".into(), "test".into(), "running".into()]);
        assert_eq!(
            t.render(),
            " Id   Name   State\n----------------------\n 1    test   running\n"
        );
    }

    #[test]
    fn sizes_print_like_virsh() {
        assert_eq!(pretty_size(0), "0.00 B");
        assert_eq!(pretty_size(10 << 20), "10.00 MiB");
        assert_eq!(pretty_size(1 << 30), "1.00 GiB");
        assert_eq!(pretty_size(1536), "1.50 KiB");
    }
}
