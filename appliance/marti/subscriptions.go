package marti

// GET /Marti/api/subscriptions/all (api-marti.md "Groups and settings"):
// the CoT connections of the clients the caller's groups see, as the
// official server lists its subscriptions: the envelope "SubscriptionInfo"
// of one item per identified client, sorted (sortBy CALLSIGN or UID,
// direction ASCENDING or DESCENDING) and paged (limit, and page from 1).

import (
	"net/http"
	"sort"

	"outpost/appliance/access"
	"outpost/appliance/broker"
	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// subscriptionInfo is one item: every field node-tak's Subscription schema
// asks for. What the server does not know (the client's version and device
// metrics, written and processed counts) is "" or 0.
type subscriptionInfo struct {
	DN                     *string `json:"dn"`
	Callsign               string  `json:"callsign"`
	ClientUID              string  `json:"clientUid"`
	LastReportMilliseconds int64   `json:"lastReportMilliseconds"`
	TakClient              string  `json:"takClient"`
	TakVersion             string  `json:"takVersion"`
	Username               string  `json:"username"`
	Groups                 []group `json:"groups"`
	Role                   string  `json:"role"`
	Team                   string  `json:"team"`
	IPAddress              string  `json:"ipAddress"`
	Port                   string  `json:"port"`
	PendingWrites          int     `json:"pendingWrites"`
	NumProcessed           int     `json:"numProcessed"`
	Protocol               string  `json:"protocol"`
	XPath                  *string `json:"xpath"`
	SubscriptionUID        string  `json:"subscriptionUid"`
	AppFramerate           string  `json:"appFramerate"`
	Battery                string  `json:"battery"`
	BatteryStatus          string  `json:"batteryStatus"`
	BatteryTemp            string  `json:"batteryTemp"`
	DeviceDataRx           string  `json:"deviceDataRx"`
	DeviceDataTx           string  `json:"deviceDataTx"`
	HeapCurrentSize        string  `json:"heapCurrentSize"`
	HeapFreeSize           string  `json:"heapFreeSize"`
	HeapMaxSize            string  `json:"heapMaxSize"`
	DeviceIPAddress        string  `json:"deviceIPAddress"`
	StorageAvailable       string  `json:"storageAvailable"`
	StorageTotal           string  `json:"storageTotal"`
	Incognito              bool    `json:"incognito"`
	HandlerType            string  `json:"handlerType"`
	LastReportDiff         int64   `json:"lastReportDiffMilliseconds"`
}

// protocols names the transport of each CoT listener as the official
// server does.
var protocols = map[string]string{"cot-tcp": "tcp", "cot-tls": "tls", "cot-ws": "websocket", "mesh": "udp", "udp": "udp"}

// maxSubscriptionsPage bounds limit=.
const maxSubscriptionsPage = 10_000

// subscriptionOrder reads sortBy and direction: less orders the clients.
func subscriptionOrder(r *http.Request) (less func(a, b broker.ClientInfo) bool, err error) {
	byUID, err := wordParam(r, "sortBy", "CALLSIGN", "UID")
	if err != nil {
		return nil, err
	}
	desc, err := wordParam(r, "direction", "ASCENDING", "DESCENDING")
	if err != nil {
		return nil, err
	}
	key := func(c broker.ClientInfo) [2]string { return [2]string{c.Callsign, c.UID} }
	if byUID {
		key = func(c broker.ClientInfo) [2]string { return [2]string{c.UID, c.Callsign} }
	}
	return func(a, b broker.ClientInfo) bool {
		ka, kb := key(a), key(b)
		if desc {
			ka, kb = kb, ka
		}
		return ka[0] < kb[0] || (ka[0] == kb[0] && ka[1] < kb[1])
	}, nil
}

// clientSubscriptions answers GET /Marti/api/subscriptions/all.
func (h *Handler) clientSubscriptions(w http.ResponseWriter, r *http.Request) error {
	less, err := subscriptionOrder(r)
	if err != nil {
		return err
	}
	page, err := intParam(r, "page", 1, 1<<20)
	if err != nil {
		return err
	}
	limit, err := intParam(r, "limit", 1, maxSubscriptionsPage)
	if err != nil {
		return err
	}
	groups, err := h.groupList(r.Context())
	if err != nil {
		return httpapi.Internal(err, "An error occurred listing the subscriptions.")
	}
	sees := access.From(r).Reads()
	clients := []broker.ClientInfo{}
	for _, c := range h.opts.Broker.Clients() {
		if store.Seen(c.Groups, sees) {
			clients = append(clients, c)
		}
	}
	sort.SliceStable(clients, func(i, j int) bool { return less(clients[i], clients[j]) })
	// The official server's page: page counts from 1 in pages of limit, or
	// is an offset when there is no limit.
	offset := 0
	switch {
	case page > 0 && limit > 0:
		offset = (page - 1) * limit
	case page > 0:
		offset = page
	}
	clients = clients[min(offset, len(clients)):]
	if limit > 0 && limit < len(clients) {
		clients = clients[:limit]
	}
	now := h.opts.Now()
	items := make([]subscriptionInfo, 0, len(clients))
	for _, c := range clients {
		last := c.LastSeen
		if last.IsZero() {
			last = c.Connected
		}
		gs := []group{}
		for _, g := range groups {
			if c.Groups&sees&g.Mask() != 0 { // the client's groups the caller sees
				gs = append(gs, groupItem(g, "IN", true))
			}
		}
		protocol := protocols[c.Listener]
		if protocol == "" {
			protocol = c.Listener
		}
		items = append(items, subscriptionInfo{Callsign: c.Callsign, ClientUID: c.UID, LastReportMilliseconds: last.UnixMilli(),
			Username: c.User, Groups: gs, Role: c.Role, Team: c.Team, IPAddress: c.Address, Protocol: protocol,
			SubscriptionUID: c.UID, HandlerType: c.Listener, LastReportDiff: max(now.Sub(last).Milliseconds(), 0)})
	}
	httpapi.WriteJSON(w, http.StatusOK, h.envelope("SubscriptionInfo", items))
	return nil
}
