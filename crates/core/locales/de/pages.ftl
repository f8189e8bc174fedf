# Die Seiten auf Deutsch: Verwalten, Abbestellen, Anmeldung und ihre
# Bestätigung, die vollständige Übersicht und die Hinweisseiten.

## Jede Seite

page-manage-link = Übersichten verwalten
page-bad-link-title = Dieser Link ist ungültig
page-bad-link = Dieser Link ist ungültig. Bitte verwenden Sie den neuesten Link aus einer Ihrer Übersichten.
page-not-done = Nicht ausgeführt
page-not-a-form = Das Formular muss als Formular gesendet werden. Es wurde nichts geändert.
page-expired-title = Formular abgelaufen
page-expired = Dieses Formular ist nicht mehr gültig; es wurde nichts geändert. Öffnen Sie die Seite erneut und versuchen Sie es noch einmal.
page-failed-title = Etwas ist schiefgelaufen
page-failed = Bei uns ist etwas schiefgelaufen; es wurde nichts geändert. Bitte versuchen Sie es später noch einmal.
page-too-large = Das Formular ist größer, als dieser Server annimmt. Es wurde nichts geändert.
page-busy = Der Server ist ausgelastet; es wurde nichts geändert. Bitte versuchen Sie es gleich noch einmal.
page-language = Sprache

## Ein Abonnement, wie eine Seite es beschreibt

when-hourly = Stündlich
when-daily = Täglich um { $hour }
when-weekly = Wöchentlich am { $day } um { $hour }
frequency-hourly = Stündlich
frequency-daily = Täglich
frequency-weekly = Wöchentlich
kind-changes = Änderungen
kind-upcoming = anstehende Einträge
collection-numbered = Sammlung { $id }
sub-by = per { $channels }
channel-email = E-Mail
channel-xmpp = XMPP
channel-sms = SMS
channel-webhook = Webhook
channel-slack = Slack
channel-discord = Discord
channel-teams = Teams
channel-ntfy = ntfy
channel-matrix = Matrix
sub-paused = pausiert
sub-through-group = über die Gruppe { $group }
sub-through-group-yours = über die Gruppe { $group } (nur für Sie: die Gruppe behält es)
sub-group-time = { $when } (Zeit der Gruppe)
sub-paused-by-group = von der Gruppe pausiert
sub-stopped-for-you = für Sie gestoppt
sub-already-paused = bereits pausiert
sub-already-stopped = für Sie bereits gestoppt

## Die Verwaltungsseite

manage-title = Ihre Übersichten
manage-heading = Ihre Übersichten, { $name }
manage-times-hour12 = Zeiten in { $zone } ({ $abbr }), im 12-Stunden-Format.
manage-times-hour24 = Zeiten in { $zone } ({ $abbr }), im 24-Stunden-Format.
manage-subs-heading = Abonnements
manage-none = Sie haben keine Abonnements.
manage-time = Uhrzeit
manage-change-time = Uhrzeit ändern
manage-send-now = Jetzt senden
manage-resume = Fortsetzen
manage-pause = Pausieren
manage-unsubscribe = Abbestellen
manage-for-good = endgültig
manage-end = Beenden
manage-cadence = Wie oft und wohin
manage-how-often = Wie oft
manage-at = Um (täglich und wöchentlich)
manage-on = Am (wöchentlich)
manage-by = Per
manage-cadence-note = Die nächste Übersicht kommt zur neuen Zeit und enthält alles seit der letzten.
manage-save = Speichern
manage-groups = Über Ihre Gruppen
manage-groups-note = Eine Gruppe, in der Sie sind, hat diese abonniert. Wenn Sie eine stoppen, gilt das nur für Sie: Die Gruppe behält sie.
manage-optin = Rückgängig: wieder an mich senden
manage-optout = Nicht mehr an mich senden
manage-settings = Ihre Einstellungen
manage-timezone = Zeitzone
manage-daily-hour = Neue tägliche Übersichten um (derzeit { $hour })
manage-week-start = Wochen beginnen am (derzeit { $day })
manage-locale = Sprache und Region
manage-quiet = Ruhezeiten (von-bis, z. B. 22:00-07:00; leer für keine)
manage-quiet-note = Benachrichtigungen warten, bis Ihre Ruhezeiten enden, und stündliche Übersichten darin kommen gesammelt mit der ersten danach. Tägliche und wöchentliche Übersichten werden trotzdem gesendet.
manage-quiet-inside = { $what }: gesendet um { $hour }, innerhalb Ihrer Ruhezeiten: Übersichten werden trotzdem gesendet; nur Benachrichtigungen und stündliche Übersichten warten.
manage-where = Wohin Übersichten gehen
contact-verified = bestätigt
contact-not-verified = nicht bestätigt
contact-disabled = deaktiviert (unzustellbar)
contact-by-operator = vom Betreiber eingerichtet
manage-matrix = Matrix-ID
manage-matrix-now = Matrix-ID (derzeit { $id })
manage-matrix-note = Ihre Benutzer-ID (@sie:example.org): Übersichten kommen von unserem Konto in einem Direktchat, sobald Sie dessen Einladung annehmen. Oder die ID (!raum:example.org) eines Raums, in den Sie unser Konto eingeladen haben.
manage-matrix-change = Matrix-ID ändern
manage-matrix-add = Matrix-ID hinzufügen
manage-matrix-remove = Matrix-ID entfernen
manage-new-link = Ein neuer Link
manage-new-link-note = Falls jemand anderes den Link zu dieser Seite haben könnte (eine weitergeleitete Übersicht, ein geteilter Bildschirm), fordern Sie einen neuen an: Er wird an Ihre E-Mail-Adresse geschickt, und dieser Link funktioniert dann nicht mehr. Abbestell-Links in bereits erhaltenen Übersichten funktionieren weiterhin.
manage-new-link-button = Neuen Link senden
manage-stop = Alles stoppen
manage-stop-note = Pausiert jedes Abonnement, stoppt die Übersichten aller Gruppen für Sie und verwirft, was noch aussteht. Sie können jedes hier wieder fortsetzen.
manage-stop-button = Alle Übersichten stoppen

## Was eine Änderung auf der Verwaltungsseite danach sagt

done-pause = Pausiert. Es wird nichts gesendet, bis Sie es fortsetzen.
done-resume = Fortgesetzt: Die nächste Übersicht kommt zu ihrer nächsten Zeit, ohne das, was während der Pause geschah.
done-hour = Geändert: Die nächste Übersicht kommt zur neuen Zeit.
done-cadence = Geändert: Die nächste Übersicht kommt zur neuen Zeit und enthält alles seit der letzten.
done-flushed = Gesendet: Die Übersicht ist unterwegs. Die nächste enthält nur, was sich ab jetzt ändert.
done-nothing = Es liegt nichts an: Es wurde nichts gesendet.
done-end = Endgültig beendet.
done-prefs = Gespeichert. Ihre Übersichten folgen den neuen Einstellungen ab ihrem nächsten Termin.
done-stop = Alles ist gestoppt: Jedes Abonnement ist pausiert, keine Übersicht einer Gruppe wird an Sie gesendet, und nichts Ausstehendes wird verschickt.
done-optout = Für Sie gestoppt: Die Gruppe behält ihre Übersicht, und ihre anderen Mitglieder erhalten sie weiterhin. Sie können das hier jederzeit rückgängig machen.
done-optin = Wieder aktiv: Die Übersichten der Gruppe erreichen Sie ab ihrem nächsten Termin wieder.
done-matrix = Gespeichert: Übersichten per Matrix gehen ab ihrem nächsten Termin an die neue ID.
done-unmatrix = Entfernt: Per Matrix wird Ihnen nichts mehr gesendet.
new-link-title = Ein neuer Link ist unterwegs
new-link-sent = Wir haben einen neuen Link an Ihre E-Mail-Adresse gesendet. Der Link, über den Sie hierher gekommen sind, öffnet diese Seite nicht mehr; Abbestell-Links in erhaltenen Übersichten funktionieren weiterhin.
refused-end = setzen Sie das Häkchen, um zu bestätigen, dass dieses Abonnement endgültig endet
refused-channels = wählen Sie mindestens einen Weg, auf dem Sie es erhalten
refused-no-matrix = Sie haben keine Matrix-ID, die entfernt werden könnte

## Die eigene Prüfung eines Feldes hat einen Wert abgelehnt.

refusal-timezone-malformed = „{ $value }“ ist keine gültige Zeitzone: wählen Sie eine aus der Liste
refusal-timezone-unknown = „{ $value }“ ist keine bekannte IANA-Zeitzone: wählen Sie eine aus der Liste
refusal-timezone-nearest = „{ $value }“ ist keine bekannte IANA-Zeitzone – meinten Sie { $nearest }?
refusal-locale = „{ $value }“ ist kein gültiges Sprachkürzel: verwenden Sie ein Kürzel wie de-DE
refusal-hour = „{ $value }“ ist keine gültige Stunde: geben Sie eine volle Stunde von 0 bis 23 an
refusal-quiet-hint = schreiben Sie HH:MM-HH:MM, z. B. 22:00-07:00, oder lassen Sie das Feld für keine Ruhezeiten leer
refusal-quiet-long = ungültige Ruhezeiten „{ $value }“: länger als { $max } Bytes ({ refusal-quiet-hint })
refusal-quiet-char = ungültige Ruhezeiten „{ $value }“: { $code } ist weder eine ASCII-Ziffer noch ein „-“ ({ refusal-quiet-hint })
refusal-quiet-dash = ungültige Ruhezeiten „{ $value }“: zwischen Beginn und Ende fehlt das „-“ ({ refusal-quiet-hint })
refusal-quiet-start = ungültige Ruhezeiten „{ $value }“: der Beginn „{ $part }“ hat nicht das Format HH:MM ({ refusal-quiet-hint })
refusal-quiet-end = ungültige Ruhezeiten „{ $value }“: das Ende „{ $part }“ hat nicht das Format HH:MM ({ refusal-quiet-hint })
refusal-quiet-same = ungültige Ruhezeiten „{ $value }“: Beginn und Ende sind gleich ({ refusal-quiet-hint })
refusal-matrix-hint = verwenden Sie @benutzer:server oder !raum:server
refusal-matrix-empty = ungültige Matrix-ID: das Feld ist leer ({ refusal-matrix-hint })
refusal-matrix-long = ungültige Matrix-ID „{ $value }“: sie ist länger als { $max } Bytes ({ refusal-matrix-hint })
refusal-matrix-space = ungültige Matrix-ID „{ $value }“: sie enthält Leerzeichen ({ refusal-matrix-hint })
refusal-matrix-char = ungültige Matrix-ID „{ $value }“: sie enthält ein Steuerzeichen oder ein Zeichen außerhalb von ASCII ({ refusal-matrix-hint })
refusal-matrix-no-server = ungültige Matrix-ID „{ $value }“: der Server fehlt (:server) ({ refusal-matrix-hint })
refusal-matrix-no-local = ungültige Matrix-ID „{ $value }“: vor dem „:“ steht nichts ({ refusal-matrix-hint })
refusal-matrix-sigil = ungültige Matrix-ID „{ $value }“: sie beginnt weder mit @ (ein Benutzer) noch mit ! (ein Raum)
refusal-matrix-port = ungültige Matrix-ID „{ $value }“: der Port des Servers liegt nicht zwischen 1 und 65535 ({ refusal-matrix-hint })
refusal-matrix-server = ungültige Matrix-ID „{ $value }“: der Servername ist weder ein Hostname noch eine IP-Adresse ({ refusal-matrix-hint })
refusal-email-control = ungültige E-Mail-Adresse „{ $value }“: sie enthält ein Steuerzeichen
refusal-email-non-ascii = ungültige E-Mail-Adresse „{ $value }“: Adressen mit Umlauten oder anderen Zeichen außerhalb von ASCII werden nicht unterstützt
refusal-email-long = ungültige E-Mail-Adresse „{ $value }“: sie ist länger als 254 Zeichen
refusal-email-no-at = ungültige E-Mail-Adresse „{ $value }“: das „@“ fehlt
refusal-email-local-length = ungültige E-Mail-Adresse „{ $value }“: der Teil vor dem „@“ muss 1 bis 64 Zeichen lang sein
refusal-email-dots = ungültige E-Mail-Adresse „{ $value }“: ein Punkt vor dem „@“ steht falsch (am Anfang, am Ende oder doppelt)
refusal-email-quoting = ungültige E-Mail-Adresse „{ $value }“: der Teil vor dem „@“ enthält ein Zeichen, das hier nicht erlaubt ist
refusal-email-domain = ungültige E-Mail-Adresse „{ $value }“: der Teil nach dem „@“ ist kein gültiger Domainname
refusal-email-no-dot = ungültige E-Mail-Adresse „{ $value }“: die Domain braucht einen Punkt (z. B. example.com)

## Abbestellen

unsubscribe-title = Abbestellen
unsubscribe-ask = Abbestellen?
unsubscribe-older = Dieser Link stammt aus einer älteren Nachricht. Er kann noch die Übersichten stoppen, mit denen er gesendet wurde, und sonst nichts: Für alles andere verwenden Sie den Link in Ihrer neuesten Übersicht.
unsubscribe-stops = Damit endet:
unsubscribe-button = Abbestellen
unsubscribed = Abbestellt
unsubscribed-note = Davon wird nichts mehr gesendet:
subscribed-again = Wieder abonniert
subscribed-again-note = Diese sind wieder aktiv, ab ihrem nächsten Termin:
unsubscribe-undo = Rückgängig
unsubscribe-manage-all = Alle Ihre Übersichten verwalten
one-click-malformed = Eine Abbestellung mit einem Klick muss genau List-Unsubscribe=One-Click senden. Es wurde nichts geändert.
one-click-done = Sie haben abbestellt. Von diesen Übersichten wird nichts mehr gesendet.

## Anmeldung und Bestätigung

signup-title = Abonnieren
signup-heading = Übersichten abonnieren
signup-sent-title = Sehen Sie in Ihr Postfach
signup-sent = Wenn die Adresse Übersichten empfangen kann, ist eine Nachricht mit einem Link an sie unterwegs. Öffnen Sie den Link und klicken Sie auf „{ signup-confirm-button }“, um Ihre Übersichten zu starten. Bis dahin wird nichts gesendet.
signup-nothing-offered = Hier wird derzeit nichts zum Abonnieren angeboten.
signup-email = E-Mail-Adresse
signup-collections = Sammlungen
signup-zone = Ihre Zeitzone
signup-submit = Abonnieren
signup-note = Wir senden eine Nachricht, um die Adresse zu bestätigen; sonst nichts, bis Sie bestätigen.
signup-limited-title = Zu viele Anmeldungen
signup-limited = Aus Ihrem Netz oder an diese Adresse gab es zuletzt zu viele Anmeldungen, oder hier wurden in der letzten Stunde zu viele vorgenommen. Es wurde nichts gesendet. Versuchen Sie es nach { $when } UTC erneut.
signup-refused-email-long = die E-Mail-Adresse ist zu lang
signup-refused-frequency = wählen Sie stündlich, täglich oder wöchentlich
signup-refused-hour = wählen Sie eine Stunde von 0 bis 23
signup-refused-day = wählen Sie einen Wochentag
signup-refused-zone = wählen Sie eine Zeitzone aus der Liste
signup-refused-collections = wählen Sie mindestens eine Sammlung
signup-refused-too-many = zu viele Sammlungen
signup-refused-unknown = wählen Sie Sammlungen aus der Liste
signup-wish = { $when } ({ $zone })
confirm-title = Bestätigen
confirm-heading = Abonnement bestätigen
confirm-digests-of = Übersichten zu:
signup-confirm-button = Bestätigen
confirm-done-title = Abonniert
confirm-done = Ihre Übersichten beginnen zu ihrem nächsten Termin.
confirm-already-title = Bereits bestätigt
confirm-already = Diese Anmeldung wurde bereits bestätigt; es wurde nichts weiter getan.

## Die vollständige Übersicht

digest-empty = Diese Übersicht ist leer.
digest-more = Und { $more } weitere, die hier nicht aufgeführt sind: Diese Seite zeigt die ersten { $listed } von { $count ->
    [one] { $count } Eintrag
   *[other] { $count } Einträgen
}.
digest-all = { $count ->
    [one] { $count } Eintrag.
   *[other] Alle { $count } Einträge.
}
