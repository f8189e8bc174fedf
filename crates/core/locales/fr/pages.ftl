# Les pages en français : gestion, désabonnement, inscription et sa
# confirmation, le résumé complet et les pages de message.

## Toutes les pages

page-manage-link = Gérer vos résumés
page-bad-link-title = Ce lien n’est pas valide
page-bad-link = Ce lien n’est pas valide. Utilisez le lien le plus récent de l’un de vos résumés.
page-not-done = Rien n’a été fait
page-not-a-form = Le formulaire doit être envoyé en tant que formulaire. Rien n’a été modifié.
page-expired-title = Formulaire expiré
page-expired = Ce formulaire n’est plus valide : rien n’a été modifié. Rouvrez la page et réessayez.
page-failed-title = Un problème est survenu
page-failed = Un problème est survenu de notre côté ; rien n’a été modifié. Réessayez plus tard.
page-too-large = Le formulaire dépasse la taille acceptée par ce serveur. Rien n’a été modifié.
page-busy = Le serveur est occupé ; rien n’a été modifié. Réessayez dans un instant.
page-language = Langue

## Un abonnement tel qu’une page le décrit

when-hourly = Toutes les heures
when-daily = Tous les jours à { $hour }
when-weekly = Chaque semaine le { $day } à { $hour }
frequency-hourly = Toutes les heures
frequency-daily = Tous les jours
frequency-weekly = Chaque semaine
kind-changes = modifications
kind-upcoming = éléments à venir
collection-numbered = collection { $id }
sub-by = par { $channels }
channel-email = e-mail
channel-xmpp = XMPP
channel-sms = SMS
channel-webhook = webhook
channel-slack = Slack
channel-discord = Discord
channel-teams = Teams
channel-ntfy = ntfy
channel-matrix = Matrix
sub-paused = en pause
sub-through-group = via le groupe { $group }
sub-through-group-yours = via le groupe { $group } (pour vous seul : le groupe le garde)
sub-group-time = { $when } (heure du groupe)
sub-paused-by-group = mis en pause par le groupe
sub-stopped-for-you = arrêté pour vous
sub-already-paused = déjà en pause
sub-already-stopped = déjà arrêté pour vous

## La page de gestion

manage-title = Vos résumés
manage-heading = Vos résumés, { $name }
manage-times-hour12 = Les heures sont en { $zone } ({ $abbr }), au format 12 heures.
manage-times-hour24 = Les heures sont en { $zone } ({ $abbr }), au format 24 heures.
manage-subs-heading = Abonnements
manage-none = Vous n’avez aucun abonnement.
manage-time = Heure
manage-change-time = Changer l’heure
manage-send-now = Envoyer maintenant
manage-resume = Reprendre
manage-pause = Mettre en pause
manage-unsubscribe = Se désabonner
manage-for-good = définitivement
manage-end = Mettre fin
manage-cadence = Fréquence et canaux
manage-how-often = Fréquence
manage-at = À (quotidien et hebdomadaire)
manage-on = Le (hebdomadaire)
manage-by = Par
manage-cadence-note = Le prochain résumé arrive à la nouvelle heure et contient tout depuis le dernier.
manage-save = Enregistrer
manage-groups = Via vos groupes
manage-groups-note = Un groupe dont vous faites partie s’est abonné à ceux-ci. En arrêter un ne l’arrête que pour vous : le groupe le garde.
manage-optin = Annuler : me l’envoyer à nouveau
manage-optout = Ne plus me l’envoyer
manage-settings = Vos réglages
manage-timezone = Fuseau horaire
manage-daily-hour = Nouveaux résumés quotidiens à (actuellement { $hour })
manage-week-start = Les semaines commencent le (actuellement { $day })
manage-locale = Langue et région
manage-quiet = Heures calmes (début-fin, p. ex. 22:00-07:00 ; vide pour aucune)
manage-quiet-note = Les notifications attendent la fin de vos heures calmes, et les résumés horaires qui y tombent arrivent ensemble dans le premier qui suit. Les résumés quotidiens et hebdomadaires sont tout de même envoyés.
manage-quiet-inside = { $what } : envoyé à { $hour }, pendant vos heures calmes : les résumés sont tout de même envoyés ; seules les notifications et les résumés horaires attendent.
manage-where = Où vont les résumés
contact-verified = vérifiée
contact-not-verified = non vérifiée
contact-disabled = désactivée (messages non remis)
contact-by-operator = définie par l’opérateur
manage-matrix = Identifiant Matrix
manage-matrix-now = Identifiant Matrix (actuellement { $id })
manage-matrix-note = Votre identifiant d’utilisateur (@vous:example.org) : les résumés viennent de notre compte dans un salon privé, une fois son invitation acceptée. Ou l’identifiant (!salon:example.org) d’un salon où vous avez invité notre compte.
manage-matrix-change = Changer l’identifiant Matrix
manage-matrix-add = Ajouter un identifiant Matrix
manage-matrix-remove = Supprimer l’identifiant Matrix
manage-new-link = Un nouveau lien
manage-new-link-note = Si quelqu’un d’autre a pu obtenir le lien de cette page (un résumé transféré, un écran partagé), demandez-en un nouveau : il est envoyé à votre adresse e-mail et ce lien cesse de fonctionner. Les liens de désabonnement des résumés déjà reçus fonctionnent toujours.
manage-new-link-button = M’envoyer un nouveau lien
manage-stop = Tout arrêter
manage-stop-note = Met en pause chaque abonnement, arrête pour vous les résumés de chaque groupe et annule ce qui est en attente. Vous pouvez reprendre chacun ici.
manage-stop-button = Arrêter tous les résumés

## Ce que dit la page de gestion après une modification

done-pause = En pause. Rien n’est envoyé tant que vous ne le reprenez pas.
done-resume = Repris : le prochain résumé arrive à son heure habituelle, sans ce qui s’est passé pendant la pause.
done-hour = Modifié : le prochain résumé arrive à la nouvelle heure.
done-cadence = Modifié : le prochain résumé arrive à la nouvelle heure et contient tout depuis le dernier.
done-flushed = Envoyé : le résumé est en route. Le prochain ne contiendra que ce qui change à partir de maintenant.
done-nothing = Rien n’est en attente : rien n’a été envoyé.
done-end = Terminé définitivement.
done-prefs = Enregistré. Vos résumés suivent les nouveaux réglages dès leur prochain envoi.
done-stop = Tout est arrêté : chaque abonnement est en pause, aucun résumé de groupe ne vous est envoyé et rien de ce qui était en attente ne partira.
done-optout = Arrêté pour vous : le groupe garde son résumé et ses autres membres le reçoivent toujours. Vous pouvez l’annuler ici quand vous voulez.
done-optin = Réactivé : les résumés du groupe vous parviennent de nouveau dès leur prochain envoi.
done-matrix = Enregistré : les résumés par Matrix vont au nouvel identifiant dès leur prochain envoi.
done-unmatrix = Supprimé : plus rien ne vous est envoyé par Matrix.
new-link-title = Un nouveau lien est en route
new-link-sent = Nous avons envoyé un nouveau lien à votre adresse e-mail. Le lien qui vous a mené ici n’ouvre plus cette page ; les liens de désabonnement des résumés reçus fonctionnent toujours.
refused-end = cochez la case pour confirmer que cet abonnement prend fin définitivement
refused-channels = choisissez au moins un moyen de le recevoir
refused-no-matrix = vous n’avez pas d’identifiant Matrix à supprimer

## La vérification propre à un champ a refusé une valeur.

refusal-timezone-malformed = « { $value } » n’est pas un fuseau horaire valide : choisissez-en un dans la liste
refusal-timezone-unknown = « { $value } » n’est pas un fuseau horaire IANA connu : choisissez-en un dans la liste
refusal-timezone-nearest = « { $value } » n’est pas un fuseau horaire IANA connu : vouliez-vous dire { $nearest } ?
refusal-locale = « { $value } » n’est pas un code de langue valide : utilisez un code comme fr-FR
refusal-hour = « { $value } » n’est pas une heure valide : indiquez une heure pleine de 0 à 23
refusal-quiet-hint = écrivez HH:MM-HH:MM, p. ex. 22:00-07:00, ou laissez le champ vide pour n’en avoir aucune
refusal-quiet-long = heures calmes « { $value } » invalides : plus de { $max } octets ({ refusal-quiet-hint })
refusal-quiet-char = heures calmes « { $value } » invalides : { $code } n’est ni un chiffre ASCII ni un « - » ({ refusal-quiet-hint })
refusal-quiet-dash = heures calmes « { $value } » invalides : il manque le « - » entre le début et la fin ({ refusal-quiet-hint })
refusal-quiet-start = heures calmes « { $value } » invalides : le début, « { $part } », n’est pas au format HH:MM ({ refusal-quiet-hint })
refusal-quiet-end = heures calmes « { $value } » invalides : la fin, « { $part } », n’est pas au format HH:MM ({ refusal-quiet-hint })
refusal-quiet-same = heures calmes « { $value } » invalides : le début et la fin sont identiques ({ refusal-quiet-hint })
refusal-matrix-hint = utilisez @utilisateur:serveur ou !salon:serveur
refusal-matrix-empty = identifiant Matrix invalide : le champ est vide ({ refusal-matrix-hint })
refusal-matrix-long = identifiant Matrix « { $value } » invalide : il dépasse { $max } octets ({ refusal-matrix-hint })
refusal-matrix-space = identifiant Matrix « { $value } » invalide : il contient des espaces ({ refusal-matrix-hint })
refusal-matrix-char = identifiant Matrix « { $value } » invalide : il contient un caractère de contrôle ou non ASCII ({ refusal-matrix-hint })
refusal-matrix-no-server = identifiant Matrix « { $value } » invalide : il n’indique aucun serveur (:serveur) ({ refusal-matrix-hint })
refusal-matrix-no-local = identifiant Matrix « { $value } » invalide : rien ne précède le « : » ({ refusal-matrix-hint })
refusal-matrix-sigil = identifiant Matrix « { $value } » invalide : il ne commence ni par @ (un utilisateur) ni par ! (un salon)
refusal-matrix-port = identifiant Matrix « { $value } » invalide : le port du serveur n’est pas compris entre 1 et 65535 ({ refusal-matrix-hint })
refusal-matrix-server = identifiant Matrix « { $value } » invalide : le nom du serveur n’est ni un nom d’hôte ni une adresse IP ({ refusal-matrix-hint })
refusal-email-control = adresse e-mail « { $value } » invalide : elle contient un caractère de contrôle
refusal-email-non-ascii = adresse e-mail « { $value } » invalide : les adresses avec des accents ou d’autres caractères non ASCII ne sont pas prises en charge
refusal-email-long = adresse e-mail « { $value } » invalide : elle dépasse 254 caractères
refusal-email-no-at = adresse e-mail « { $value } » invalide : il manque le « @ »
refusal-email-local-length = adresse e-mail « { $value } » invalide : la partie avant le « @ » doit compter de 1 à 64 caractères
refusal-email-dots = adresse e-mail « { $value } » invalide : un point est mal placé avant le « @ » (au début, à la fin ou deux de suite)
refusal-email-quoting = adresse e-mail « { $value } » invalide : la partie avant le « @ » contient un caractère non autorisé ici
refusal-email-domain = adresse e-mail « { $value } » invalide : la partie après le « @ » n’est pas un nom de domaine valide
refusal-email-no-dot = adresse e-mail « { $value } » invalide : le domaine doit contenir un point (p. ex. example.com)

## Désabonnement

unsubscribe-title = Se désabonner
unsubscribe-ask = Se désabonner ?
unsubscribe-older = Ce lien provient d’un message plus ancien. Il peut encore arrêter les résumés avec lesquels il a été envoyé, et rien d’autre : pour tout le reste, utilisez le lien de votre résumé le plus récent.
unsubscribe-stops = Ceci arrête :
unsubscribe-button = Se désabonner
unsubscribed = Désabonné
unsubscribed-note = Plus rien de ceci ne sera envoyé :
subscribed-again = Réabonné
subscribed-again-note = Ceux-ci reprennent dès leur prochain envoi :
unsubscribe-undo = Annuler
unsubscribe-manage-all = Gérer tous vos résumés
one-click-malformed = Un désabonnement en un clic doit envoyer exactement List-Unsubscribe=One-Click. Rien n’a été modifié.
one-click-done = Vous êtes désabonné. Plus aucun de ces résumés ne sera envoyé.

## Inscription et confirmation

signup-title = S’abonner
signup-heading = S’abonner aux résumés
signup-sent-title = Consultez votre messagerie
signup-sent = Si cette adresse peut recevoir des résumés, un message contenant un lien est en route. Ouvrez le lien et cliquez sur « { signup-confirm-button } » pour lancer vos résumés. Rien n’est envoyé avant.
signup-nothing-offered = Aucun abonnement n’est proposé ici pour le moment.
signup-email = Adresse e-mail
signup-collections = Collections
signup-zone = Votre fuseau horaire
signup-submit = S’abonner
signup-note = Nous envoyons un seul message pour confirmer l’adresse ; rien d’autre tant que vous n’avez pas confirmé.
signup-limited-title = Trop d’inscriptions
signup-limited = Trop d’inscriptions sont venues de votre réseau ou ont visé cette adresse récemment, ou trop ont été faites ici au cours de la dernière heure. Rien n’a été envoyé. Réessayez après { $when } UTC.
signup-refused-email-long = l’adresse e-mail est trop longue
signup-refused-frequency = choisissez toutes les heures, tous les jours ou chaque semaine
signup-refused-hour = choisissez une heure entre 0 et 23
signup-refused-day = choisissez un jour de la semaine
signup-refused-zone = choisissez un fuseau horaire dans la liste
signup-refused-collections = choisissez au moins une collection
signup-refused-too-many = trop de collections
signup-refused-unknown = choisissez des collections dans la liste
signup-wish = { $when } ({ $zone })
confirm-title = Confirmer
confirm-heading = Confirmez votre abonnement
confirm-digests-of = Résumés de :
signup-confirm-button = Confirmer
confirm-done-title = Abonné
confirm-done = Vos résumés commencent à leur prochaine échéance.
confirm-already-title = Déjà confirmé
confirm-already = Cette inscription a déjà été confirmée ; rien de plus n’a été fait.

## Le résumé complet

digest-empty = Ce résumé est vide.
digest-more = Et { $more } de plus, non listés ici : cette page montre les { $listed } premiers sur { $count ->
    [one] { $count } élément
   *[other] { $count } éléments
}.
digest-all = { $count ->
    [one] { $count } élément.
   *[other] Les { $count } éléments.
}
