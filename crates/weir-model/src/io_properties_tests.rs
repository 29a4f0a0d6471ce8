use super::*;

const IOTUNE: &str = "disks:
  - mountpoint: /var/lib/scylla
    read_iops: 85000
    read_bandwidth: 1900000000
    write_iops: 60000
    write_bandwidth: 1750000000
";

fn parse_err(text: &str) -> IoPropertiesError {
    IoProperties::parse(text, "io.yaml").expect_err("should be refused")
}

#[test]
fn reads_iotune_output_and_writes_it_back_byte_for_byte() {
    let props = IoProperties::parse(IOTUNE, "io.yaml").expect("valid");
    assert_eq!(props.disks.len(), 1);
    let d = &props.disks[0];
    assert_eq!(d.mountpoints, vec!["/var/lib/scylla".to_string()]);
    assert_eq!(d.read_iops, 85_000);
    assert_eq!(d.write_bytes_per_sec, 1_750_000_000);
    assert_eq!(d.rate_factor, 1.0);
    assert!(!d.duplex);
    assert_eq!(props.to_yaml_string(), IOTUNE);
}

#[test]
fn optional_keys_and_binary_suffixes() {
    let text = "disks:
  - mountpoints: [/a, /b]
    read_iops: 95k
    read_bandwidth: 2GiB
    write_iops: 10K
    write_bandwidth: 1G
    read_saturation_length: 128k
    write_saturation_length: 64KiB
    physical_block_size: 4096
    duplex: true
    rate_factor: 0.9
";
    let props = IoProperties::parse(text, "io.yaml").expect("valid");
    let d = &props.disks[0];
    assert_eq!(d.mountpoints.len(), 2);
    assert_eq!(d.read_iops, 97_280);
    assert_eq!(d.read_bytes_per_sec, 2 << 30);
    assert_eq!(d.write_iops, 10_240);
    assert_eq!(d.read_saturation_length_bytes, Some(128 << 10));
    assert_eq!(d.write_saturation_length_bytes, Some(64 << 10));
    assert_eq!(d.physical_block_size_bytes, Some(4096));
    assert!(d.duplex);
    assert_eq!(d.rate_factor, 0.9);
    // Round trip keeps every value.
    let again = IoProperties::parse(&props.to_yaml_string(), "again").expect("valid");
    assert_eq!(again, props);
}

#[test]
fn zero_rate_names_the_line_and_field() {
    let e = parse_err(&IOTUNE.replace("write_iops: 60000", "write_iops: 0"));
    assert_eq!(e.line, Some(5), "{e}");
    assert!(
        e.to_string().starts_with("io.yaml:5: write_iops is 0"),
        "{e}"
    );
}

#[test]
fn unknown_section_is_an_error_with_its_line() {
    let e = parse_err(&format!("{IOTUNE}extra:\n  a: 1\n"));
    assert_eq!(e.line, Some(7), "{e}");
    assert!(e.message.contains("unknown section `extra`"), "{e}");
}

#[test]
fn unknown_disk_key_is_an_error_with_its_line() {
    let e = parse_err(&IOTUNE.replace("write_iops:", "write_ops:"));
    assert_eq!(e.line, Some(5), "{e}");
    assert!(e.message.contains("unknown key `write_ops`"), "{e}");
}

#[test]
fn duplicate_device_is_an_error() {
    let text = format!("{IOTUNE}{}", &IOTUNE["disks:\n".len()..]);
    let e = parse_err(&text);
    assert_eq!(e.line, Some(7), "{e}");
    assert!(e.message.contains("listed twice"), "{e}");
}

#[test]
fn duplicate_device_through_two_paths_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = dir.path().join("a");
    std::fs::create_dir(&a).expect("mkdir");
    let mut props = IoProperties::parse(IOTUNE, "io.yaml").expect("valid");
    props.disks[0].mountpoints = vec![dir.path().display().to_string()];
    let mut second = props.disks[0].clone();
    second.mountpoints = vec![a.display().to_string()];
    props.disks.push(second);
    let e = props.check_devices("io.yaml").expect_err("same device");
    assert!(e.message.contains("same device"), "{e}");
    assert!(props.disk_for_path(&a).is_some());
}

#[test]
fn missing_rate_bad_values_and_bad_yaml() {
    let e = parse_err(&IOTUNE.replace("    read_bandwidth: 1900000000\n", ""));
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.message.contains("no `read_bandwidth`"), "{e}");
    let e = parse_err(&IOTUNE.replace("85000", "fast"));
    assert_eq!(e.line, Some(3), "{e}");
    assert!(e.message.contains("binary suffix"), "{e}");
    let e = parse_err(&IOTUNE.replace("85000", "-5"));
    assert_eq!(e.line, Some(3), "{e}");
    let e = parse_err(&format!("{IOTUNE}    rate_factor: 0\n"));
    assert_eq!(e.line, Some(7), "{e}");
    let e = parse_err(&format!("{IOTUNE}    duplex: maybe\n"));
    assert!(e.message.contains("true or false"), "{e}");
    let e = parse_err("disks: [\n");
    assert!(e.message.contains("not valid YAML"), "{e}");
    let e = parse_err("disks: []\n");
    assert!(e.message.contains("non-empty"), "{e}");
    let e = parse_err("- a\n");
    assert!(e.message.contains("`disks:`"), "{e}");
}

#[test]
fn more_than_eight_disks_is_an_error() {
    let mut text = String::from("disks:\n");
    for i in 0..9 {
        text.push_str(&IOTUNE["disks:\n".len()..].replace("scylla", &format!("d{i}")));
    }
    let e = parse_err(&text);
    assert!(e.message.contains("at most 8"), "{e}");
    assert_eq!(e.line, Some(42), "{e}");
}

#[test]
fn save_and_load_a_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("io_properties.yaml");
    let props = IoProperties {
        disks: vec![DiskProperties::new("/mnt/data dir", 1, 2, 3, 4)],
    };
    props.save(&path).expect("save");
    assert_eq!(IoProperties::load(&path).expect("load"), props);
    let e = IoProperties::load(&dir.path().join("missing.yaml")).expect_err("missing");
    assert!(e.message.contains("cannot read"), "{e}");
}

#[test]
fn weir_latency_goal_is_read_written_and_checked() {
    let text = format!("{IOTUNE}    weir_latency_goal_us: 480\n");
    let props = IoProperties::parse(&text, "io.yaml").expect("valid");
    assert_eq!(props.disks[0].latency_goal_us, Some(480));
    assert_eq!(props.to_yaml_string(), text);
    assert_eq!(
        IoProperties::parse(IOTUNE, "io.yaml").expect("valid").disks[0].latency_goal_us,
        None
    );
    for bad in ["0", "0.5", "fast"] {
        let e = parse_err(&format!("{IOTUNE}    weir_latency_goal_us: {bad}\n"));
        assert_eq!(e.line, Some(7), "{bad}: {e}");
        assert!(e.message.contains("microseconds"), "{bad}: {e}");
    }
}
