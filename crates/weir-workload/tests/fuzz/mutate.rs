//! Structured mutations of valid YAML files: values made huge, zero, negative, fractional,
//! of the wrong type or unicode; keys dropped, duplicated, renamed; lines swapped, blocks
//! repeated, indentation broken, the text cut short. Each case derives from (seed, case), so
//! a failure replays exactly.

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// Values that have broken parsers before: integer and float edges, units, types, unicode.
const VALUES: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "-9223372036854775808",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "4294967295",
    "4294967296",
    "2147483648",
    "65536",
    "1e308",
    "-1e308",
    "1e-308",
    "0.5",
    "1.5k",
    ".nan",
    ".inf",
    "-.inf",
    "nan",
    "0x10",
    "1e3k",
    "5µs",
    "5us",
    "0.000001ns",
    "1h",
    "100000000h",
    "16E",
    "1T",
    "1024T",
    "17179869184T",
    "128kB",
    "1GiB",
    "-4k",
    "4k4",
    "\"\"",
    "''",
    "~",
    "null",
    "true",
    "no",
    "[]",
    "[0]",
    "[1, 0]",
    "[0, 0, 0]",
    "[-1]",
    "[4294967296]",
    "{}",
    "{a: 1}",
    "all",
    "none",
    "busyloop",
    "steady",
    "poisson",
    "append",
    "seqwrite",
    "sloppy",
    "ünïcødé",
    "💥",
    "\u{202e}evil",
    "a\tb",
    "&anchor 1",
    "*alias",
    "!!binary aGVsbG8=",
    "|\n  block",
    "\"\\u0000\"",
];

const KEYS: &[&str] = &[
    "name",
    "type",
    "shards",
    "data_size",
    "shard_info",
    "parallelism",
    "rps",
    "batch",
    "limit",
    "reqsize",
    "shares",
    "class",
    "think_time",
    "think_after",
    "bandwidth",
    "options",
    "prepare",
    "dsync",
    "parent",
    "disks",
    "read_iops",
    "write_bandwidth",
    "raid0",
    "members",
    "chunk_size",
    "channels",
    "mountpoint",
    "bogus_key",
    "ключ",
];

pub struct Mutator {
    rng: SmallRng,
}

impl Mutator {
    pub fn new(seed: u64, case: u64) -> Mutator {
        Mutator {
            rng: SmallRng::seed_from_u64(seed ^ case.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        }
    }

    /// One to three mutations of `text`.
    pub fn mutate(&mut self, text: &str) -> String {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let rounds = self.rng.gen_range(1..=3);
        for _ in 0..rounds {
            if lines.is_empty() {
                lines.push(format!("{}: {}", self.key(), self.value()));
                continue;
            }
            let i = self.rng.gen_range(0..lines.len());
            match self.rng.gen_range(0..11) {
                0..=3 => self.replace_value(&mut lines[i]),
                10 => self.replace_every_number(&mut lines),
                4 => {
                    lines.remove(i);
                }
                5 => lines.insert(i, lines[i].clone()),
                6 => {
                    let j = self.rng.gen_range(0..lines.len());
                    lines.swap(i, j);
                }
                7 => self.rename_key(&mut lines[i]),
                8 => self.repeat_block(&mut lines, i),
                _ => self.reindent(&mut lines[i]),
            }
        }
        let mut out = lines.join("\n");
        out.push('\n');
        if self.rng.gen_ratio(1, 20) {
            let cut = self.rng.gen_range(0..out.len());
            let cut = (0..=cut)
                .rev()
                .find(|c| out.is_char_boundary(*c))
                .unwrap_or(0);
            out.truncate(cut);
        }
        out
    }

    fn value(&mut self) -> String {
        (*VALUES.choose(&mut self.rng).unwrap_or(&"0")).to_string()
    }

    fn key(&mut self) -> String {
        (*KEYS.choose(&mut self.rng).unwrap_or(&"name")).to_string()
    }

    fn replace_value(&mut self, line: &mut String) {
        let value = self.value();
        match line.find(':') {
            Some(colon) => {
                line.truncate(colon + 1);
                line.push(' ');
                line.push_str(&value);
            }
            None => {
                let indent = line.len() - line.trim_start().len();
                *line = format!("{}- {value}", " ".repeat(indent));
            }
        }
    }

    /// Every numeric value becomes the same edge value: products and sums of several
    /// fields (parallelism x batch, data_size / shards) then overflow together.
    fn replace_every_number(&mut self, lines: &mut [String]) {
        let value = self.value();
        for line in lines.iter_mut() {
            let Some(colon) = line.find(':') else {
                continue;
            };
            let old = line[colon + 1..].trim();
            if old.starts_with(|c: char| c.is_ascii_digit()) {
                line.truncate(colon + 1);
                line.push(' ');
                line.push_str(&value);
            }
        }
    }

    fn rename_key(&mut self, line: &mut String) {
        let key = self.key();
        if let Some(colon) = line.find(':') {
            let start = line.len() - line.trim_start_matches([' ', '-']).len();
            if start <= colon {
                line.replace_range(start..colon, &key);
            }
        }
    }

    /// Repeats the list item around line `i` (a whole job or group, twice).
    fn repeat_block(&mut self, lines: &mut Vec<String>, i: usize) {
        let start = (0..=i)
            .rev()
            .find(|&k| lines[k].trim_start().starts_with("- "));
        let Some(start) = start else { return };
        let end = (start + 1..lines.len())
            .find(|&k| lines[k].trim_start().starts_with("- "))
            .unwrap_or(lines.len());
        let block: Vec<String> = lines[start..end].to_vec();
        let at = end;
        for (k, line) in block.into_iter().enumerate() {
            lines.insert(at + k, line);
        }
    }

    fn reindent(&mut self, line: &mut String) {
        let shift = self.rng.gen_range(0..4);
        let trimmed = line.trim_start().to_string();
        *line = format!(
            "{}{trimmed}",
            " ".repeat(shift * 2 + self.rng.gen_range(0..2))
        );
    }
}
