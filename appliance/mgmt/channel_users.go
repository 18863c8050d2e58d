package mgmt

// System users over the socket.io channel, as FreeTAKServer's web UI
// manages them (socketio.md "System users"): systemUsers lists them
// (answered systemUsers and systemUsersUpdate, the items of GET
// /ManageSystemUser/getAll), addSystemUser creates, updateSystemUser
// changes (FreeTAKServer's {"systemUsers": [{"uid", "Password", "Token",
// "Group"}]}, as its web UI's user page sends it) and removeSystemUser
// deletes them with the bodies and checks of postSystemUser, the batch of
// putSystemUser and deleteSystemUser, under the rule of those routes (access.md "Route
// matrix": admin). The channel's key is an administrator's credential
// (access.md "Principals"); a socket that has not authenticated gets no
// answer, as for every other event (api.md §6.1).

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/mgmt/socketio"
	"outpost/appliance/store"
)

// channelPrincipal is who a socket acts as: the channel key once it has
// authenticated, anonymous before.
func channelPrincipal(s *socketio.Socket) access.Principal {
	if !isAuthenticated(s) {
		return access.Anon()
	}
	return access.Principal{Kind: access.ChannelKey, Name: "websocketkey", In: store.AllGroups, Out: store.AllGroups, SeesAll: true}
}

// attach gives the channel what the API holds: the user events (a's
// users service does the work) and the emergencies of the events answer.
func (c *Channel) attach(a *API) {
	c.emergencies = activeEmergencies(a)
	c.srv.On("systemUsers", func(s *socketio.Socket, _ []json.RawMessage, ack func(...any)) {
		c.userOp(s, "systemUsers", ack, func(ctx context.Context) (string, error) {
			list, err := a.opts.Users.List(ctx)
			if err != nil {
				return "", err
			}
			out := usersList{SystemUsers: make([]userItem, 0, len(list))}
			for _, u := range list {
				out.SystemUsers = append(out.SystemUsers, a.userView(u))
			}
			return jsonString(out), nil
		})
	})
	c.srv.On("addSystemUser", func(s *socketio.Socket, args []json.RawMessage, ack func(...any)) {
		var body createBody
		users, err := decodeThen(args, &body, func() ([]newUser, error) { return checkCreate(body) })
		c.userOp(s, "addSystemUser", ack, func(ctx context.Context) (string, error) {
			if err != nil {
				return "", err
			}
			res, err := a.createUsers(ctx, users, c.hostPort(s))
			if err != nil {
				return "", err
			}
			c.log.Info("system users created through the socket.io channel", "remote", s.RemoteAddr(), "created", len(res.SystemUsers), "asked", len(users))
			return jsonString(channelAnswer{http.StatusCreated, res.Message, res.SystemUsers}), nil
		})
	})
	c.srv.On("updateSystemUser", func(s *socketio.Socket, args []json.RawMessage, ack func(...any)) {
		var body struct {
			SystemUsers []json.RawMessage `json:"systemUsers"`
		}
		items, err := decodeThen(args, &body, func() ([]json.RawMessage, error) { return body.SystemUsers, nil })
		c.userOp(s, "updateSystemUser", ack, func(ctx context.Context) (string, error) {
			if err == nil {
				err = a.updateUsers(ctx, items)
			}
			if err != nil {
				return "", err
			}
			c.log.Info("system users updated through the socket.io channel", "remote", s.RemoteAddr(), "updated", len(items))
			return jsonString(channelAnswer{Status: http.StatusOK, Message: "user updated"}), nil
		})
	})
	c.srv.On("removeSystemUser", func(s *socketio.Socket, args []json.RawMessage, ack func(...any)) {
		var body deleteBody
		targets, err := decodeThen(args, &body, func() ([]deleteTarget, error) { return checkDelete(body) })
		c.userOp(s, "removeSystemUser", ack, func(ctx context.Context) (string, error) {
			if err == nil {
				err = a.deleteUsers(ctx, targets)
			}
			if err != nil {
				return "", err
			}
			c.log.Info("system users deleted through the socket.io channel", "remote", s.RemoteAddr(), "deleted", len(targets))
			return jsonString(channelAnswer{Status: http.StatusOK, Message: "user deleted"}), nil
		})
	})
}

// channelAnswer is the answer to a change asked over the channel: the
// REST route's status and message (and the users it made).
type channelAnswer struct {
	Status      int        `json:"status"`
	Message     string     `json:"message"`
	SystemUsers []userItem `json:"SystemUsers,omitempty"`
}

// decodeThen decodes the event's argument (JSON text in a string, or the
// object) into body, then checks it.
func decodeThen[T any](args []json.RawMessage, body any, check func() (T, error)) (T, error) {
	var zero T
	raw := []byte("null")
	if len(args) > 0 {
		raw = args[0]
		var s string
		if json.Unmarshal(raw, &s) == nil {
			raw = []byte(s)
		}
	}
	if err := httpapi.DecodeJSONBytes(raw, body); err != nil {
		return zero, err
	}
	return check()
}

// channelOpTimeout bounds one user operation of the channel.
const channelOpTimeout = time.Minute

// userOp runs op for socket s under the admin rule (access.md "Route
// matrix"), off the socket's reader (creating users with certificates
// takes a while, and the reader must keep answering pings): one operation
// per socket at a time, ended at shutdown. Its answer, or the error's
// refusal, goes to the socket under event (and its FreeTAKServer twin),
// and to the acknowledgement when the client asked for one.
func (c *Channel) userOp(s *socketio.Socket, event string, ack func(...any), op func(context.Context) (string, error)) {
	p := channelPrincipal(s)
	if err := access.Check(access.Admin, p); err != nil {
		if !p.Authenticated() {
			// api.md §6.1: no data before authentication.
			c.limited.Debug("socket.io event before authentication ignored", "remote", s.RemoteAddr(), "event", event)
			return
		}
		c.answer(s, event, ack, "", err)
		return
	}
	busy, _ := s.Get("userOp").(*atomic.Bool)
	if busy == nil { // handlers of one socket run one at a time: no race here
		busy = new(atomic.Bool)
		s.Set("userOp", busy)
	}
	if !busy.CompareAndSwap(false, true) {
		c.answer(s, event, ack, "", httpapi.Errorf(http.StatusTooManyRequests, "another user operation of this socket is under way; wait for its answer"))
		return
	}
	c.opsMu.Lock()
	if c.opsCtx.Err() != nil { // shutting down
		c.opsMu.Unlock()
		busy.Store(false)
		return
	}
	c.ops.Add(1)
	c.opsMu.Unlock()
	go func() {
		defer c.ops.Done()
		ctx, cancel := context.WithTimeout(c.opsCtx, channelOpTimeout)
		defer cancel()
		payload, err := op(ctx)
		// Free before the answer: a client that sends its next operation
		// as soon as it has the answer must find this one over.
		busy.Store(false)
		c.answer(s, event, ack, payload, err)
	}()
}

// answer sends an operation's payload, or its error as {"status",
// "message"} (a fault of ours is logged and answered with the routes' 500
// text, never its own words). A refusal is logged too, rate-limited: the
// web UI shows no answer, so the log is where its operator learns why a
// user did not appear. Refusals name fields, never a password or token.
func (c *Channel) answer(s *socketio.Socket, event string, ack func(...any), payload string, err error) {
	if err != nil {
		status, msg, ok := httpapi.Refusal(err)
		switch {
		case ok:
			c.limited.Info("socket.io user operation refused", "event", event, "remote", s.RemoteAddr(), "status", status, "reason", logx.Clip(msg))
		case errors.Is(err, context.Canceled):
			return // shutting down
		default:
			c.log.Error("socket.io user operation failed", "event", event, "remote", s.RemoteAddr(), "err", logx.Clip(err.Error()))
			status, msg = http.StatusInternalServerError, usersError
		}
		payload = jsonString(channelAnswer{Status: status, Message: msg})
	}
	if ack != nil {
		ack(payload)
	}
	c.emit(s, event, payload)
}
