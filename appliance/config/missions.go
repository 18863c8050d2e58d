package config

// Missions are the mission budgets (RELIABILITY.md "Budgets"): what one
// mission may hold and what one client address may write to mission logs.
// 0: no limit.
type Missions struct {
	MissionLogEntryMaxBytes    int // missionLogEntryMaxBytes: content of one log entry (413 above)
	MissionLogMaxEntries       int // missionLogMaxEntries: log entries of one mission (413 above)
	MissionLogMaxBytes         int // missionLogMaxBytes: content bytes of one mission's log entries (413 above)
	MissionLogEntriesPerMinute int // missionLogEntriesPerMinute: log entries one address may write per minute (429 above)
	MissionLogBytesPerMinute   int // missionLogBytesPerMinute: log content bytes one address may write per minute (429 above)
	MissionMaxContents         int // missionMaxContents: files and CoT uids of one mission together (413 above)
	MissionMaxChanges          int // missionMaxChanges: change records kept per mission; the oldest go first
	MissionMaxChangeBytes      int // missionMaxChangeBytes: bytes of change records kept per mission; the oldest go first
}

// MaxMissionLogEntry is the largest missionLogEntryMaxBytes: a log entry
// arrives in a JSON body of at most 256 KiB.
const MaxMissionLogEntry = 192 << 10

func defaultMissions() Missions {
	return Missions{
		MissionLogEntryMaxBytes:    64 << 10,
		MissionLogMaxEntries:       10000,
		MissionLogMaxBytes:         16 << 20,
		MissionLogEntriesPerMinute: 60,
		MissionLogBytesPerMinute:   1 << 20,
		MissionMaxContents:         10000,
		MissionMaxChanges:          10000,
		MissionMaxChangeBytes:      32 << 20,
	}
}

// Validate checks the mission budgets: none negative, a log entry that
// fits a request, and a per-address byte rate that lets one whole entry
// through.
func (m Missions) Validate() error {
	if err := checkLimits(
		limitKey{"missionLogEntryMaxBytes", m.MissionLogEntryMaxBytes, 0}, limitKey{"missionLogMaxEntries", m.MissionLogMaxEntries, 0},
		limitKey{"missionLogMaxBytes", m.MissionLogMaxBytes, 0}, limitKey{"missionLogEntriesPerMinute", m.MissionLogEntriesPerMinute, 0},
		limitKey{"missionLogBytesPerMinute", m.MissionLogBytesPerMinute, 0}, limitKey{"missionMaxContents", m.MissionMaxContents, 0},
		limitKey{"missionMaxChanges", m.MissionMaxChanges, 0}, limitKey{"missionMaxChangeBytes", m.MissionMaxChangeBytes, 0},
	); err != nil {
		return err
	}
	if m.MissionLogEntryMaxBytes == 0 || m.MissionLogEntryMaxBytes > MaxMissionLogEntry {
		return keyErr("missionLogEntryMaxBytes", "must be between 1 and 192 KiB (a log entry arrives in a request of at most 256 KiB)")
	}
	if m.MissionLogBytesPerMinute != 0 && m.MissionLogBytesPerMinute < m.MissionLogEntryMaxBytes {
		return keyErr("missionLogBytesPerMinute", "must be 0 (no limit) or at least missionLogEntryMaxBytes, or the largest entry could never be written")
	}
	return nil
}
