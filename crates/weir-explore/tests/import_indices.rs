//! Diskplorer imports whose job names carry indices far outside any real grid.

use weir_explore::import::import;

/// A job named `r_idx=14444444444444` (a fuzzer input, kept in tests/data and in the fuzz corpus,
/// where libFuzzer reports it as a slow unit if the walk comes back): the frontier
/// walks the read indices the file holds, so the import returns at once with one frontier
/// candidate per distinct read index, instead of passing over every index up to the largest.
#[test]
fn a_huge_read_index_costs_no_more_than_the_indices_present() {
    let text = include_str!("data/diskplorer-huge-read-index.json");
    let map = import(
        text,
        "diskplorer-huge-read-index.json",
        1000.0,
        4096,
        131_072,
    )
    .expect("the file is a Diskplorer grid with odd names, which import accepts");
    assert!(
        !map.points.is_empty(),
        "the grid's cells are kept as points"
    );
    assert!(
        map.frontier.len() <= 3,
        "three read rates in the file, so at most three frontier points: {:?}",
        map.frontier
    );
}
