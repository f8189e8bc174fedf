# Der tägliche Bericht des Betreibers auf Deutsch. Kanal-, Frequenz- und
# Statusnamen stehen so da, wie digestd sie speichert.

report-subject = digestd-Bericht { $date }
report-title = digestd { $version }, Bericht vom { $at }
report-digests-since = Übersichten seit { $since }:
report-none-due = keine fällig
report-channel = Kanal
report-frequency = Frequenz
report-due = fällig
report-posted = erstellt
report-empty = leer
report-sent = gesendet
report-failed = gescheitert
report-bounces = Unzustellbar: { $hard } dauerhaft, { $soft } vorübergehend; deaktivierte Adressen: { $disabled }
report-retries = Ausstehende Wiederholungen: { $count }
report-oldest = Älteste offene Anfrage: { $id } ({ $status }), eingestellt { $at }
report-oldest-none = Älteste offene Anfrage: keine
report-latest-tick = Letzter Tick: { $at }
report-latest-run = Letzte versandte Übersicht: Abonnement { $subscription }, Zeitraum { $period }, fällig { $due }, gesendet { $sent } ({ $late } s verspätet)
report-latest-run-none = Letzte versandte Übersicht: keine in den letzten 24 Stunden
report-lease = Sperre { $job }: gehalten von { $holder }; zuletzt gelaufen { $at }
report-nobody = niemandem
report-never = nie
