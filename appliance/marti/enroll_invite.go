package marti

// What the enrollment port serves beside enrollment itself, for devices
// joined by invitation (protocol.md §8 "Enrolling with an invitation").
// Both answers are free of secrets (no key, no token, no password), and
// both are still behind the enrollment port's TLS and Basic credentials
// (the user's password or an invitation's token, not spent here): the
// plain-HTTP port serves neither.
//
//   - GET /Marti/api/tls/config/qr: iTAK's server code as a PNG image.
//     Public portal code written for OpenTAKServer fetches a QR image from
//     this path (with ?clientUid=, which Outpost ignores); OpenTAKServer's
//     own repository serves iTAK's text at /api/itak_qr_string instead.
//     Outpost's image is iTAK's "description,host,port,SSL" text
//     (qr.ITAKQuickConnect), the same for every caller: it holds nothing of
//     the caller's.
//   - GET /Marti/api/tls/enrollment-package?device=atak|itak|wintak: the
//     enrollment-only connection package (pki.EnrollmentPackage: the CA
//     truststore and a connection that enrolls with the user's name and the
//     token); WinTAK has no scanner, its user opens this link.

import (
	"fmt"
	"net/http"

	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/pki"
	"outpost/appliance/qr"
)

// qrImageSize is the width of the QR images (pixels).
const qrImageSize = 512

func (h *EnrollmentHandler) configQR(w http.ResponseWriter, r *http.Request, c *enrollCall) error {
	a := h.opts.Authority
	host, err := a.ConnectHost()
	if err != nil {
		h.log.Warn("iTAK code requested but cannot be made", "user", logx.Clip(c.user.Name), "remote", c.remote, "err", err)
		return httpapi.Errorf(http.StatusServiceUnavailable, "the server has no public host name configured (publicHost)")
	}
	img, err := qr.PNG(qr.ITAKQuickConnect(a.ServerName(), host, a.Ports().SSLCoT), qrImageSize)
	if err != nil {
		return ours(err, "the code could not be drawn", "drawing iTAK's code")
	}
	w.Header().Set("Content-Type", "image/png")
	w.WriteHeader(http.StatusOK)
	w.Write(img)
	return nil
}

func (h *EnrollmentHandler) enrollmentPackage(w http.ResponseWriter, r *http.Request, c *enrollCall) error {
	device := pki.DeviceWinTAK
	if v := r.URL.Query().Get("device"); v != "" {
		d, err := pki.ParseDevice(v)
		if err != nil {
			return httpapi.Errorf(http.StatusBadRequest, "device must be atak, itak or wintak")
		}
		device = d
	}
	name, data, err := h.opts.Authority.EnrollmentPackage(device)
	if err != nil {
		h.log.Warn("enrollment package cannot be built", "user", logx.Clip(c.user.Name), "remote", c.remote, "err", err)
		return httpapi.Errorf(http.StatusServiceUnavailable, "the enrollment package cannot be built: %s", err)
	}
	h.log.Info("enrollment package sent", "user", logx.Clip(c.user.Name), "remote", c.remote, "device", device, "invitation", c.invitation)
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	w.WriteHeader(http.StatusOK)
	w.Write(data)
	return nil
}
