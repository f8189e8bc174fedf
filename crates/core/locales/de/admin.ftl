# Die Seiten des Betreibers unter /admin auf Deutsch
# (`[i18n] operator_locale`). Status-, Kanal-, Art- und Ergebnisnamen
# erscheinen übersetzt; Links, Filter und Formulare behalten das
# gespeicherte Wort.

## Jede Seite

admin-site = digestd-Verwaltung
admin-footer = digestd · Seiten des Betreibers
admin-nav-status = Status
admin-nav-requests = Aufträge
admin-nav-subscribers = Abonnenten
admin-nav-grid = Wochenraster
admin-signed-in = angemeldet mit dem Token { $token }
admin-logout = Abmelden
admin-not-done = Nicht ausgeführt
admin-back = Zurück
admin-filter = Filtern
admin-yes = ja
admin-no = nein

## Anmeldung

admin-login = Anmeldung für Betreiber
admin-login-token = Admin-Token
admin-login-note = Ein API-Token mit dem Bereich admin ({ $command }). Es wird gegen ein Sitzungs-Cookie getauscht; das Token selbst bleibt nicht im Browser.
admin-login-button = Anmelden
admin-login-bad = Das ist kein gültiges Admin-Token. Es wurde nichts geändert.
admin-login-many = Zu viele fehlgeschlagene Anmeldungen aus diesem Netz: Versuchen Sie es in 15 Minuten erneut. Es wurde nichts geprüft.
admin-login-expired = Dieses Formular ist abgelaufen: Geben Sie das Token erneut ein. Es wurde nichts geprüft.

## Status

admin-status-at = Status – Stand { $now }
admin-queue = Warteschlange
admin-th-status = Status
admin-th-requests = Aufträge
admin-oldest-pending = Ältester wartender Auftrag:
admin-ticks = Letzte Ticks
admin-ticks-none = Noch kein Tick hat einen Lauf verzeichnet.
admin-th-tick-at = Tick um
admin-th-runs = Läufe
admin-th-digests = Übersichten
admin-th-empty-runs = leere Läufe
admin-th-late = letzter Lauf verspätet um
admin-ticks-note = Ticks, wie ihre Läufe sie verzeichnet haben (ein Tick, der nichts Fälliges fand, verzeichnet keinen Lauf). Wie lange ein Tick dauerte, wird nicht gespeichert; die Tick-Dauern dieses Prozesses stehen unter { $metrics } ({ $metric }).
admin-leases = Leases
admin-leases-none = Es ist noch kein Job gelaufen.
admin-th-job = Job
admin-th-holder = gehalten von
admin-th-until = bis
admin-th-last-run = letzter Lauf
admin-events = Ereignisse für Betreiber
admin-events-note = Wartend: alle; gesendet, fehlgeschlagen und übersprungen: die der letzten 24 Stunden.
admin-th-events = Ereignisse
admin-events-oldest = Ältestes wartendes Ereignis:
admin-events-failure = Letzter Fehler:
admin-events-commands = { $list } zeigt sie an; { $replay } sendet einen Zeitraum erneut.
admin-events-off = nicht gesendet: [events] url ist leer
admin-events-to = gesendet an { $url }
admin-event-failed = Ereignis { $id } ({ $kind }): { $error }
admin-on-time = pünktlich
admin-delay-s = { $s } s
admin-delay-min = { $min } min { $s } s
admin-delay-h = { $h } h { $min } min
admin-ago = { $at } (vor { $delay })
admin-just-now = { $at } (gerade eben)
admin-none-pending = keiner wartet
admin-nobody = niemand
admin-expired-lease = niemand (abgelaufene Lease von { $holder })
admin-never = nie

## Aufträge

admin-filter-status = Status
admin-requests-any = alle
admin-filter-sender = Absender
admin-filter-recipient = Empfänger
admin-requests-none = Kein Auftrag passt.
admin-th-id = ID
admin-th-kind = Art
admin-th-from = von
admin-th-to = an
admin-th-subject = Betreff
admin-th-requested = erstellt
admin-th-finished = abgeschlossen
admin-requests-older = Ältere Aufträge
admin-request = Auftrag { $id }
admin-cancel = Diesen Auftrag abbrechen
admin-cancel-note = Was noch nicht zugestellt ist, wird nie gesendet.
admin-cancelled = Abgebrochen.
admin-recipients = Empfänger
admin-not-expanded = Noch nicht aufgelöst: Kein Durchlauf der Warteschlange hat ihn übernommen.
admin-no-recipient = Niemand: Jedes Mitglied der Gruppe hat sich abgemeldet, oder die Gruppe hatte kein Mitglied.
admin-th-party = Partei
admin-th-channel = Kanal
admin-th-address = Adresse
admin-th-state = Zustand
admin-th-retries = Wiederholungen
admin-th-last-reply = letzte Antwort
admin-delivered = zugestellt
admin-gave-up = aufgegeben
admin-open = offen
admin-attempts = Versuche
admin-attempts-none = Noch kein Versuch.
admin-th-when = wann
admin-th-outcome = Ergebnis
admin-th-reply = Antwort
admin-all-requests = Alle Aufträge

## Abonnenten und ein Abonnement

admin-filter-name = Name enthält
admin-filter-disabled = Nur mit deaktivierter Adresse
admin-users-none = Kein Benutzer passt.
admin-th-verified = bestätigt
admin-th-bounces = Bounces
admin-disabled = deaktiviert
admin-enabled = aktiv
admin-reenable = Wieder aktivieren
admin-enabled-notice = Aktiviert: Nachrichten gehen wieder an diese Adresse; ihr Bounce-Zähler beginnt von vorn.
admin-no-subscriptions = Keine Abonnements.
admin-their-time = { $when } (Ortszeit des Abonnenten)
admin-paused = pausiert
admin-details = Details
admin-opted-out = Von Gruppenabonnements abgemeldet:
admin-more = Weitere
admin-subscription = Abonnement { $id }
admin-party-time = { $when } (Zeit von { $party })
admin-optouts = Abgemeldete Mitglieder
admin-optouts-none = Niemand: Seine Übersichten erreichen jedes Mitglied.
admin-optouts-note = Seine Übersichten lassen diese Mitglieder aus, bis sie oder Sie die Abmeldung aufheben.
admin-th-member = Mitglied
admin-th-since = seit
admin-clear = Aufheben
admin-cleared = Aufgehoben: Die Übersichten der Gruppe erreichen dieses Mitglied ab der nächsten wieder.

## Das Wochenraster (auch Grafik und Tabelle; `digestd grid` bleibt englisch)

admin-grid = Wochenraster
admin-grid-hours = Stunden in
admin-grid-server = Serverzeit (UTC)
admin-grid-local = Ortszeit jedes Abonnenten
admin-grid-week = Woche vom
admin-grid-user = Benutzer
admin-grid-all = alle
admin-grid-show = Anzeigen
admin-grid-table = Als Tabelle
admin-grid-title = Übersichten in der Woche vom { $week } ({ $scope })
admin-grid-scope-all = alle Benutzer
admin-grid-scope-user = Benutzer { $user }
admin-grid-table-title = { $title }, { $time }
admin-grid-time-local = Ortszeit
admin-grid-time-server = Serverzeit (UTC)
admin-grid-subtitle = Übersichten pro Stunde der Woche, { $time }
admin-grid-cell = { $day } { $hour } { $time }: { $digests ->
    [one] { $digests } Übersicht
   *[other] { $digests } Übersichten
}, { $empty ->
    [one] { $empty } leerer Lauf
   *[other] { $empty } leere Läufe
}
admin-grid-dot = { $empty ->
    [one] { $empty } leerer Lauf
   *[other] { $empty } leere Läufe
}
admin-grid-hour-axis = Stunde des Tages ({ $time })
admin-grid-day-axis = Tag
admin-grid-scale = Übersichten pro Stunde:
admin-grid-empty-runs = { $empty ->
    [one] { $empty } leerer Lauf
   *[other] { $empty } leere Läufe
} (gelaufen, nichts zu senden) nicht mitgezählt
admin-grid-peak = Spitze: { $day } { $hour } mit { $digests } von { $total ->
    [one] { $total } Übersicht
   *[other] { $total } Übersichten
}
admin-grid-total = gesamt

## Die Namen dessen, was die Warteschlange speichert (Links, Filter und
## Formulare behalten das gespeicherte Wort)

admin-status-pending = wartend
admin-status-sending = wird gesendet
admin-status-sent = gesendet
admin-status-partial-failure = teilweise fehlgeschlagen
admin-status-failed = fehlgeschlagen
admin-status-cancelled = abgebrochen
admin-event-status-pending = wartend
admin-event-status-sent = gesendet
admin-event-status-failed = fehlgeschlagen
admin-event-status-skipped = übersprungen
admin-kind-digest = Übersicht
admin-kind-notification = Benachrichtigung
admin-outcome-sent = angenommen
admin-outcome-transient = vorübergehend abgelehnt
admin-outcome-permanent = dauerhaft abgelehnt
admin-outcome-gave-up = aufgegeben

## Was ein Filter oder ein Formular abgelehnt hat (ein angegebener Wert
## erscheint maskiert und gekürzt; es wurde nichts geändert)

admin-refused-long = Das Feld „{ $field }“ ist länger als { $max } Zeichen.
admin-refused-control = Das Feld „{ $field }“ enthält ein Steuerzeichen; das ist nicht erlaubt.
admin-refused-status = „{ $value }“ ist kein Status: Wählen Sie einen aus der Liste.
admin-refused-name = „{ $value }“ ist kein gültiger Name: Verwenden Sie 1 bis { $max } Buchstaben, Ziffern, „.“, „_“ oder „-“.
admin-refused-no-party = Es gibt keinen Benutzer und keine Gruppe namens „{ $value }“.
admin-refused-before = „{ $value }“ ist keine Auftrags-ID.
admin-refused-disabled = „{ $value }“ ist kein zulässiger Wert für „{ admin-filter-disabled }“: Verwenden Sie 1 oder nichts.
admin-refused-time = „{ $value }“ ist keine Zeitangabe des Rasters: Wählen Sie { admin-grid-server } oder { admin-grid-local }.
admin-refused-week = „{ $value }“ ist kein Zeitpunkt: Verwenden Sie RFC 3339, z. B. 2026-11-23T00:00:00Z.
admin-refused-channel = „{ $value }“ ist kein Kanal.
admin-refused-no-request = Diesen Auftrag gibt es nicht.
admin-refused-no-subscription = Dieses Abonnement gibt es nicht.
admin-refused-not-open = Dieser Auftrag ist bereits abgeschlossen ({ $status }): Nur wartende oder laufende Aufträge können abgebrochen werden.
admin-refused-no-address = { $party } hat keine Adresse für { $channel }.
admin-refused-not-opted-out = { $member } hat sich von diesem Abonnement nicht abgemeldet.
