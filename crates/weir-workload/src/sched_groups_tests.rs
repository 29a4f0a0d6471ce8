use super::*;
use crate::parse::parse_plan;

/// Seastar's apps/io_tester/sched.yaml, unchanged.
const SCHED_YAML: &str = "- name: statement
  shares: 1000

- name: maintenance
  shares: 100

- name: compaction
  shares: 200
  parent: maintenance

- name: backup
  shares: 100
  parent: maintenance
";

fn error(text: &str) -> ParseError {
    SchedGroups::parse(text).expect_err("must be refused")
}

#[test]
fn seastar_sched_yaml_parses() {
    let g = SchedGroups::parse(SCHED_YAML).expect("valid");
    assert_eq!(g.groups.len(), 4);
    assert!(g.is_supergroup("maintenance"));
    assert!(!g.is_supergroup("statement"));
    assert_eq!(
        g.get("backup").and_then(|b| b.parent.clone()),
        Some("maintenance".into())
    );
}

#[test]
fn an_unknown_parent_is_refused_at_its_key() {
    let e = error("- name: a\n  shares: 10\n  parent: nope\n");
    assert_eq!((e.line, e.column), (Some(3), Some(3)), "{e}");
    assert!(e.message.contains("`nope` is not defined"), "{e}");
}

#[test]
fn a_cycle_is_refused() {
    let e = error("- name: a\n  shares: 1\n  parent: b\n- name: b\n  shares: 1\n  parent: a\n");
    assert!(e.message.contains("cycle"), "{e}");
    assert_eq!(e.line, Some(3), "{e}");
    let e = error("- name: a\n  shares: 1\n  parent: a\n");
    assert!(e.message.contains("itself"), "{e}");
}

#[test]
fn nesting_deeper_than_one_level_is_refused() {
    let e = error(
        "- name: top\n  shares: 1\n- name: mid\n  shares: 1\n  parent: top\n\
         - name: leaf\n  shares: 1\n  parent: mid\n",
    );
    assert!(e.message.contains("one level deep"), "{e}");
    assert_eq!(e.line, Some(8), "{e}");
}

#[test]
fn shares_out_of_range_are_refused_with_the_range() {
    let e = error("- name: a\n  shares: 0\n");
    assert_eq!((e.line, e.column), (Some(2), Some(3)), "{e}");
    assert!(e.message.contains("1 to 1000000"), "{e}");
    let e = error("- name: a\n  shares: 2000000\n");
    assert!(e.message.contains("out of range"), "{e}");
    let e = error("- name: a\n  shares: -5\n");
    assert_eq!(e.line, Some(2), "{e}");
    let e = error("- name: a\n");
    assert!(e.message.contains("shares"), "{e}");
}

#[test]
fn duplicates_unknown_keys_and_wrong_shapes_are_refused() {
    let e = error("- name: a\n  shares: 1\n- name: a\n  shares: 2\n");
    assert!(e.message.contains("twice"), "{e}");
    let e = error("- name: a\n  shares: 1\n  weight: 3\n");
    assert_eq!(e.line, Some(3), "{e}");
    let e = error("name: a\nshares: 1\n");
    assert!(e.message.contains("YAML list of groups"), "{e}");
    let e = error("");
    assert!(e.message.contains("no groups"), "{e}");
}

fn jobs(text: &str) -> Plan {
    parse_plan(text).expect("valid job file")
}

#[test]
fn jobs_join_groups_by_class() {
    let g = SchedGroups::parse(SCHED_YAML).expect("valid");
    let plan = jobs(
        "- name: reads\n  type: randread\n  shard_info:\n    class: statement\n\
         - name: compact\n  type: seqwrite\n  shard_info:\n    class: compaction\n    shares: 5\n\
         - name: other\n  type: randread\n  shard_info:\n    shares: 7\n",
    );
    let p = g.place(&plan, "sched.yaml").expect("placed");
    assert_eq!(
        p[0],
        ClassPlacement {
            class: "statement".into(),
            shares: 1000,
            supergroup: None
        }
    );
    // The group's shares apply, not the job's.
    assert_eq!(
        p[1],
        ClassPlacement {
            class: "compaction".into(),
            shares: 200,
            supergroup: Some(("maintenance".into(), 100))
        }
    );
    assert_eq!(p[2].class, "other");
    assert_eq!(p[2].shares, 7);
}

#[test]
fn bad_joins_are_refused_with_the_fix() {
    let g = SchedGroups::parse(SCHED_YAML).expect("valid");
    let e = g
        .place(
            &jobs("- name: x\n  type: randread\n  shard_info:\n    class: maintenance\n"),
            "sched.yaml",
        )
        .expect_err("supergroup");
    assert!(
        matches!(&e, PlacementError::ClassIsSupergroup { class, .. } if class == "maintenance"),
        "{e:?}"
    );
    let e = e.to_string();
    assert!(e.contains("supergroup") && e.contains("compaction"), "{e}");
    let e = g
        .place(
            &jobs("- name: x\n  type: randread\n  shard_info:\n    class: statment\n"),
            "sched.yaml",
        )
        .expect_err("typo");
    assert!(matches!(&e, PlacementError::UnknownClass { .. }), "{e:?}");
    assert!(e.to_string().contains("neither a group"), "{e}");
    let e = g
        .place(&jobs("- name: backup\n  type: randread\n"), "sched.yaml")
        .expect_err("name clash");
    assert!(matches!(&e, PlacementError::JobNamesGroup { .. }), "{e:?}");
    assert!(e.to_string().contains("class: backup"), "{e}");
    // Another job's name is a class (io_tester makes a group per job name).
    let plan = jobs(
        "- name: a\n  type: randread\n  shard_info:\n    shares: 30\n\
         - name: b\n  type: randread\n  shard_info:\n    class: a\n",
    );
    let p = g.place(&plan, "sched.yaml").expect("placed");
    assert_eq!((p[1].class.as_str(), p[1].shares), ("a", 30));
}
