# Les pages de l’exploitant sous /admin en français
# (`[i18n] operator_locale`). Les noms d’état, de canal, de type et de
# résultat sont traduits ; liens, filtres et formulaires gardent le mot
# enregistré.

## Toutes les pages

admin-site = administration digestd
admin-footer = digestd · pages de l’exploitant
admin-nav-status = État
admin-nav-requests = Demandes
admin-nav-subscribers = Abonnés
admin-nav-grid = Grille
admin-signed-in = connecté avec le jeton { $token }
admin-logout = Se déconnecter
admin-not-done = Non effectué
admin-back = Retour
admin-filter = Filtrer
admin-yes = oui
admin-no = non

## Connexion

admin-login = Connexion de l’exploitant
admin-login-token = Jeton d’administration
admin-login-note = Un jeton d’API de portée admin ({ $command }). Il est échangé contre un cookie de session ; le jeton lui-même n’est pas conservé dans le navigateur.
admin-login-button = Se connecter
admin-login-bad = Ce n’est pas un jeton d’administration valide. Rien n’a été modifié.
admin-login-many = Trop de connexions échouées depuis ce réseau : réessayez dans 15 minutes. Rien n’a été vérifié.
admin-login-expired = Ce formulaire a expiré : saisissez de nouveau le jeton. Rien n’a été vérifié.

## État

admin-status-at = État au { $now }
admin-queue = File d’attente
admin-th-status = état
admin-th-requests = demandes
admin-oldest-pending = Plus ancienne demande en attente :
admin-ticks = Derniers ticks
admin-ticks-none = Aucun tick n’a encore enregistré d’exécution.
admin-th-tick-at = tick à
admin-th-runs = exécutions
admin-th-digests = résumés
admin-th-empty-runs = exécutions vides
admin-th-late = retard de la dernière exécution
admin-ticks-note = Les ticks tels que leurs exécutions les ont enregistrés (un tick qui n’a rien trouvé à envoyer n’enregistre pas d’exécution). La durée de chaque tick n’est pas conservée ; celles de ce processus sont sur { $metrics } ({ $metric }).
admin-leases = Baux
admin-leases-none = Aucune tâche n’a encore tourné.
admin-th-job = tâche
admin-th-holder = détenu par
admin-th-until = jusqu’à
admin-th-last-run = dernière exécution
admin-events = Événements pour l’exploitant
admin-events-note = En attente : tous ; envoyés, en échec et ignorés : ceux des dernières 24 heures.
admin-th-events = événements
admin-events-oldest = Plus ancien événement en attente :
admin-events-failure = Dernier échec :
admin-events-commands = { $list } les affiche ; { $replay } renvoie une période.
admin-events-off = non envoyés : [events] url est vide
admin-events-to = envoyés à { $url }
admin-event-failed = événement { $id } ({ $kind }) : { $error }
admin-on-time = à l’heure
admin-delay-s = { $s } s
admin-delay-min = { $min } min { $s } s
admin-delay-h = { $h } h { $min } min
admin-ago = { $at } (il y a { $delay })
admin-just-now = { $at } (à l’instant)
admin-none-pending = aucune en attente
admin-nobody = personne
admin-expired-lease = personne (bail expiré de { $holder })
admin-never = jamais

## Demandes

admin-filter-status = État
admin-requests-any = tous
admin-filter-sender = Expéditeur
admin-filter-recipient = Destinataire
admin-requests-none = Aucune demande ne correspond.
admin-th-id = id
admin-th-kind = type
admin-th-from = de
admin-th-to = à
admin-th-subject = objet
admin-th-requested = demandée
admin-th-finished = terminée
admin-requests-older = Demandes plus anciennes
admin-request = Demande { $id }
admin-cancel = Annuler cette demande
admin-cancel-note = Ce qui n’est pas encore distribué ne sera jamais envoyé.
admin-cancelled = Annulée.
admin-recipients = Destinataires
admin-not-expanded = Pas encore développée : aucun passage de la file ne l’a prise.
admin-no-recipient = Personne : tous les membres du groupe s’en sont désinscrits, ou le groupe n’avait aucun membre.
admin-th-party = partie
admin-th-channel = canal
admin-th-address = adresse
admin-th-state = état
admin-th-retries = nouvelles tentatives
admin-th-last-reply = dernière réponse
admin-delivered = distribué
admin-gave-up = abandonné
admin-open = en cours
admin-attempts = Tentatives
admin-attempts-none = Aucune tentative pour l’instant.
admin-th-when = quand
admin-th-outcome = résultat
admin-th-reply = réponse
admin-all-requests = Toutes les demandes

## Abonnés et un abonnement

admin-filter-name = Le nom contient
admin-filter-disabled = Seulement avec une adresse désactivée
admin-users-none = Aucun utilisateur ne correspond.
admin-th-verified = vérifiée
admin-th-bounces = rebonds
admin-disabled = désactivée
admin-enabled = active
admin-reenable = Réactiver
admin-enabled-notice = Réactivée : les messages partent de nouveau vers cette adresse ; son compteur de rebonds repart de zéro.
admin-no-subscriptions = Aucun abonnement.
admin-their-time = { $when } (heure de l’abonné)
admin-paused = en pause
admin-details = détails
admin-opted-out = Désinscrit des abonnements de groupe :
admin-more = Suite
admin-subscription = Abonnement { $id }
admin-party-time = { $when } (heure de { $party })
admin-optouts = Membres désinscrits
admin-optouts-none = Personne : ses résumés parviennent à tous les membres.
admin-optouts-note = Ses résumés laissent ces membres de côté jusqu’à ce qu’eux-mêmes ou vous leviez la désinscription.
admin-th-member = membre
admin-th-since = depuis
admin-clear = Lever
admin-cleared = Levée : les résumés du groupe parviennent de nouveau à ce membre dès le prochain.

## La grille de la semaine (dessin et tableau compris ; `digestd grid` reste en anglais)

admin-grid = Grille de la semaine
admin-grid-hours = Heures en
admin-grid-server = heure du serveur (UTC)
admin-grid-local = heure locale de chaque abonné
admin-grid-week = Semaine du
admin-grid-user = Utilisateur
admin-grid-all = tous
admin-grid-show = Afficher
admin-grid-table = Sous forme de tableau
admin-grid-title = résumés de la semaine du { $week } ({ $scope })
admin-grid-scope-all = tous les utilisateurs
admin-grid-scope-user = utilisateur { $user }
admin-grid-table-title = { $title }, { $time }
admin-grid-time-local = heure locale
admin-grid-time-server = heure du serveur (UTC)
admin-grid-subtitle = Résumés par heure de la semaine, { $time }
admin-grid-cell = { $day } { $hour } { $time } : { $digests ->
    [one] { $digests } résumé
   *[other] { $digests } résumés
}, { $empty ->
    [one] { $empty } exécution vide
   *[other] { $empty } exécutions vides
}
admin-grid-dot = { $empty ->
    [one] { $empty } exécution vide
   *[other] { $empty } exécutions vides
}
admin-grid-hour-axis = heure de la journée ({ $time })
admin-grid-day-axis = jour
admin-grid-scale = résumés par heure :
admin-grid-empty-runs = { $empty ->
    [one] { $empty } exécution vide (exécutée, rien à envoyer) non comptée
   *[other] { $empty } exécutions vides (exécutées, rien à envoyer) non comptées
}
admin-grid-peak = pic : { $day } { $hour } avec { $digests } { $digests ->
    [one] résumé
   *[other] résumés
} sur { $total }
admin-grid-total = total

## Les noms de ce que la file d’attente enregistre (liens, filtres et
## formulaires gardent le mot enregistré)

admin-status-pending = en attente
admin-status-sending = en cours d’envoi
admin-status-sent = envoyée
admin-status-partial-failure = partiellement en échec
admin-status-failed = en échec
admin-status-cancelled = annulée
admin-event-status-pending = en attente
admin-event-status-sent = envoyé
admin-event-status-failed = en échec
admin-event-status-skipped = ignoré
admin-kind-digest = résumé
admin-kind-notification = notification
admin-outcome-sent = accepté
admin-outcome-transient = refus temporaire
admin-outcome-permanent = refus définitif
admin-outcome-gave-up = abandonné

## Ce qu’un filtre ou un formulaire a refusé (une valeur saisie s’affiche
## échappée et tronquée ; rien n’a été modifié)

admin-refused-long = Le champ « { $field } » dépasse { $max } caractères.
admin-refused-control = Le champ « { $field } » contient un caractère de contrôle, ce qui n’est pas autorisé.
admin-refused-status = « { $value } » n’est pas un état : choisissez-en un dans la liste.
admin-refused-name = « { $value } » n’est pas un nom valide : utilisez de 1 à { $max } lettres, chiffres, « . », « _ » ou « - ».
admin-refused-no-party = Aucun utilisateur ni groupe ne s’appelle « { $value } ».
admin-refused-before = « { $value } » n’est pas un identifiant de demande.
admin-refused-disabled = « { $value } » n’est pas une valeur possible pour « { admin-filter-disabled } » : indiquez 1 ou rien.
admin-refused-time = « { $value } » n’est pas une heure de référence de la grille : choisissez { admin-grid-server } ou { admin-grid-local }.
admin-refused-week = « { $value } » n’est pas un instant : utilisez le format RFC 3339, par exemple 2026-11-23T00:00:00Z.
admin-refused-channel = « { $value } » n’est pas un canal.
admin-refused-no-request = Cette demande n’existe pas.
admin-refused-no-subscription = Cet abonnement n’existe pas.
admin-refused-not-open = Cette demande est déjà terminée ({ $status }) : seules les demandes en attente ou en cours d’envoi peuvent être annulées.
admin-refused-no-address = { $party } n’a pas d’adresse { $channel }.
admin-refused-not-opted-out = { $member } ne s’est pas désinscrit de cet abonnement.
