//! Times parsing and token counting of conversation files (JSON message lists).
//!
//! `cargo run --release -p context-compact-core --example profile_count a.json b.json`
//! prints the first-use costs (pretokenizer tables, BPE tables) and the medians over 20 rounds.
//! With `PROFILE_COUNT_ONLY=1` it only counts, single-threaded, for `perf record`.
use std::time::Instant;

use context_compact_core::model::{message, pretokenize, tokens};

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    let encoding = tokens::Encoding::O200kBase;

    let t = Instant::now();
    pretokenize::preload();
    let t_tables = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    tokens::preload(encoding);
    let t_bpe = t.elapsed().as_secs_f64() * 1e3;
    let list = message::parse_list(&texts[0]).unwrap();
    let t = Instant::now();
    let first: usize = list
        .iter()
        .map(|m| tokens::count_message(encoding, m))
        .sum();
    let t_first = t.elapsed().as_secs_f64() * 1e3;
    println!(
        "first use: pretokenizer tables {t_tables:.2} ms, bpe tables {t_bpe:.2} ms, first count ({first} tokens, cold piece cache) {t_first:.2} ms"
    );

    if std::env::var_os("PROFILE_COUNT_ONLY").is_some() {
        let lists: Vec<_> = texts
            .iter()
            .map(|t| message::parse_list(t).unwrap())
            .collect();
        let mut total = 0;
        for round in 0..200 {
            total += lists[round % lists.len()]
                .iter()
                .map(|m| tokens::count_message(encoding, m))
                .sum::<usize>();
        }
        println!("{total}");
        return;
    }

    let (mut t_parse, mut t_count, mut t_whole, mut t_seq) = (vec![], vec![], vec![], vec![]);
    for round in 0..20 {
        let text = &texts[round % texts.len()];
        let t = Instant::now();
        let list = message::parse_list(text).unwrap();
        t_parse.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let n: usize = tokens::count_each(encoding, &list).iter().sum();
        t_count.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let n2: usize = list
            .iter()
            .map(|m| tokens::count_message(encoding, m))
            .sum();
        t_seq.push(t.elapsed().as_secs_f64() * 1e3);
        drop(list);
        let t = Instant::now();
        let m: usize = tokens::count_list_json(encoding, text)
            .unwrap()
            .iter()
            .sum();
        t_whole.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(n, m);
        assert_eq!(n, n2);
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    println!(
        "parse_list {:.2}  count_each(par) {:.2}  count seq {:.2}  count_list_json {:.2}",
        med(&mut t_parse),
        med(&mut t_count),
        med(&mut t_seq),
        med(&mut t_whole)
    );
}
