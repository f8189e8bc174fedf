DROP TABLE subscription_optouts;
