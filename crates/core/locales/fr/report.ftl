# Le rapport quotidien de l’opérateur en français. Les noms de canal, de
# fréquence et d’état sont ceux que digestd enregistre.

report-subject = Rapport digestd du { $date }
report-title = Rapport de digestd { $version } au { $at }
report-digests-since = Résumés depuis le { $since } :
report-none-due = aucun à envoyer
report-channel = canal
report-frequency = fréquence
report-due = dus
report-posted = postés
report-empty = vides
report-sent = envoyés
report-failed = échoués
report-bounces = Retours : { $hard } définitifs, { $soft } temporaires ; adresses désactivées : { $disabled }
report-retries = Nouvelles tentatives en attente : { $count }
report-oldest = Plus ancienne demande non terminée : { $id } ({ $status }), postée le { $at }
report-oldest-none = Plus ancienne demande non terminée : aucune
report-latest-tick = Dernier tick : { $at }
report-latest-run = Dernier résumé parti : abonnement { $subscription }, période { $period }, dû le { $due }, envoyé le { $sent } ({ $late } s de retard)
report-latest-run-none = Dernier résumé parti : aucun en 24 heures
report-lease = Verrou { $job } : détenu par { $holder } ; dernière exécution { $at }
report-nobody = personne
report-never = jamais
