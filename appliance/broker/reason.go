package broker

// Reason says why a session closed. It is the one list of close reasons of
// the relay: the broker records some, transports (package stream) the others,
// and logs, the client listing and /metrics show them by name.
type Reason uint8

// The close reasons. The two slow-consumer reasons are kept apart so an
// operator can tell a burst (the queue filled up) from a dead link (the
// socket accepted nothing for writeTimeout).
const (
	ReasonNone          Reason = iota // still open
	ReasonClientClosed                // the client closed the connection
	ReasonIdle                        // silent for the idle timeout
	ReasonTooLarge                    // a message over maxMessageBytes
	ReasonReadError                   // reading failed otherwise
	ReasonWriteError                  // writing failed (not a timeout)
	ReasonQueueLimit                  // slow consumer: queue over queueHardBytes or frames
	ReasonWriteDeadline               // slow consumer: a write blocked past writeTimeout
	ReasonRevoked                     // its client certificate was revoked
	ReasonShutdown                    // the server is shutting down
	numReasons
)

var reasonNames = [numReasons]string{
	ReasonNone:          "",
	ReasonClientClosed:  "client closed",
	ReasonIdle:          "idle timeout",
	ReasonTooLarge:      "message too large",
	ReasonReadError:     "read error",
	ReasonWriteError:    "write error",
	ReasonQueueLimit:    "slow consumer (queue limit)",
	ReasonWriteDeadline: "slow consumer (write deadline)",
	ReasonRevoked:       "certificate revoked",
	ReasonShutdown:      "server shutdown",
}

var reasonLabels = [numReasons]string{
	ReasonNone:          "none",
	ReasonClientClosed:  "client_closed",
	ReasonIdle:          "idle_timeout",
	ReasonTooLarge:      "message_too_large",
	ReasonReadError:     "read_error",
	ReasonWriteError:    "write_error",
	ReasonQueueLimit:    "queue_limit",
	ReasonWriteDeadline: "write_deadline",
	ReasonRevoked:       "certificate_revoked",
	ReasonShutdown:      "server_shutdown",
}

// String is the reason in words, as logs show it.
func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return "unknown"
}

// Label is the reason as a metric label value (snake case).
func (r Reason) Label() string {
	if r < numReasons {
		return reasonLabels[r]
	}
	return "unknown"
}

// SlowConsumer reports whether the reason is one of the slow-consumer pair.
func (r Reason) SlowConsumer() bool { return r == ReasonQueueLimit || r == ReasonWriteDeadline }

// Reasons lists every close reason (ReasonNone excluded), in order.
func Reasons() []Reason {
	out := make([]Reason, 0, numReasons-1)
	for r := ReasonNone + 1; r < numReasons; r++ {
		out = append(out, r)
	}
	return out
}
