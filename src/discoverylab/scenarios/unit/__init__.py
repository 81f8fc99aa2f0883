"""The ten unit-test ("Small Skills") tasks."""
